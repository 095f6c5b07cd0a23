import type { IncomingMessage, ServerResponse } from "node:http";
import { contentToText, type Event, EventType, type Message, PROTOCOL_VERSION } from "@ag-ui/core";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";
import { z } from "zod";
import { applyResume } from "../../agui/interrupts";
import { streamRun } from "../../agui/run";
import { sessionForThread } from "../../services/agui-threads";
import type { TCredential } from "../../auth/credential-status";
import type { TActor } from "../../core/actor";
import { DomainError, refused } from "../../core/errors";
import { ZScriptTurn } from "../../harnesses/scripted";
import { maxBodyBytesFor, ZAttachmentInputs } from "../../core/media";
import { invokeResponse } from "../../services/invoke-response";
import { describeIssues, readJsonWithAttachments } from "./body";
import type { TOpenConnection } from "../shared/open-connections";
import type { TTransportDeps } from "../shared/deps";

const ZRunIds = z.object({ threadId: z.string().min(1).max(200), runId: z.string().min(1).max(200) });

/** What `forwardedProps` may carry for Countersign (other keys are ignored). */
const ZForwardedProps = z.object({
  /** The configured agent to run (default: the default agent). */
  agent: z.string().min(1).max(64).optional(),
  /** For the `scripted` agents: the script to play instead of the last user message. */
  script: z.array(ZScriptTurn).min(1).max(1000).optional(),
  approvalTtlMs: z.number().int().min(1000).optional(),
  clientToolTtlMs: z.number().int().min(1000).optional(),
  /** A Countersign `input` (string or object) instead of the last user message. */
  input: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  /** Files for the run, as `POST /v1/responses` takes them. */
  attachments: ZAttachmentInputs.optional(),
});

/** The text of the last message when it is the user's; the run's input. */
function lastUserText(messages: readonly Message[]): string | null {
  const last = messages.at(-1);
  if (last?.role !== "user") return null;
  const text = contentToText(last.content as Parameters<typeof contentToText>[0]).trim();
  return text === "" ? null : text;
}

/**
 * `POST /v1/agui`: the AG-UI protocol over Countersign runs. The body is a `RunAgentInput`; the
 * thread is a session of the caller; a run without `resume` starts a response with the last user
 * message (or `forwardedProps.script` / `input`); a run with `resume` answers the interrupts the
 * previous run ended with (approvals: `{decision}`, client tools: `{output}`, questions:
 * `{answers}`; `status:"cancelled"` denies, cancels or declines) and continues that response.
 * Bad input is a `{detail, code}` error before any event; then the events stream as SSE, taking
 * one of the user's stream slots and ending when the credential no longer holds.
 */
export async function handleAgui(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, actor: TActor, credential: TCredential): Promise<void> {
  const parsed = RunAgentInputSchema.safeParse(await readJsonWithAttachments(req, maxBodyBytesFor(deps.config.media), (v) => (v as { forwardedProps?: { attachments?: unknown } } | null)?.forwardedProps?.attachments));
  if (!parsed.success) throw new DomainError("invalid_request", `Invalid RunAgentInput: ${describeIssues(parsed.error as unknown as z.ZodError)}.`);
  const input = parsed.data;
  const ids = ZRunIds.safeParse(input);
  if (!ids.success) throw new DomainError("invalid_request", `Invalid RunAgentInput: ${describeIssues(ids.error)}.`);
  const props = ZForwardedProps.safeParse(input.forwardedProps ?? {});
  if (!props.success) throw new DomainError("invalid_request", `Invalid forwardedProps: ${describeIssues(props.error)}.`);
  const agentName = props.data.agent ?? deps.agents.defaultAgent;
  if (!deps.agents.find(agentName)) throw new DomainError("invalid_request", `forwardedProps.agent: no agent named ${agentName} is configured.`);
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "runAgents" } });

  // Past the user's cap on open streams: refused before anything is created or resumed.
  const connection = deps.connections.open(credential);
  try {
    await streamAgui(deps, req, res, actor, { input, agentName, props: props.data, credential }, connection);
  } finally {
    connection.release();
  }
}

async function streamAgui(
  deps: TTransportDeps,
  req: IncomingMessage,
  res: ServerResponse,
  actor: TActor,
  run: { input: z.infer<typeof RunAgentInputSchema>; agentName: string; props: z.infer<typeof ZForwardedProps>; credential: TCredential },
  connection: TOpenConnection,
): Promise<void> {
  const { input, agentName } = run;
  const sessionId = await sessionForThread(deps, actor, input.threadId, agentName);
  let target: { responseId: string; after: number };
  if (input.resume && input.resume.length > 0) {
    target = await applyResume(deps, actor, sessionId, input.resume);
  } else {
    const { script, approvalTtlMs, clientToolTtlMs } = run.props;
    const runInput = script ? { script, ...(approvalTtlMs ? { approvalTtlMs } : {}), ...(clientToolTtlMs ? { clientToolTtlMs } : {}) } : (run.props.input ?? lastUserText(input.messages));
    if (!runInput) throw new DomainError("invalid_request", "messages: the last message must be a user message with text (or pass forwardedProps.script or forwardedProps.input).");
    let sourceOpen = true;
    res.once("close", () => {
      if (!res.writableFinished) sourceOpen = false;
    });
    const invoked = await invokeResponse(
      deps,
      actor,
      { input: runInput, sessionId, agent: agentName, metadata: { agui: { threadId: input.threadId, runId: input.runId } }, attachments: run.props.attachments },
      { via: "http", isSourceCurrent: () => sourceOpen, credential: run.credential },
    );
    target = { responseId: invoked.responseId, after: invoked.afterSequence === 0 ? -1 : invoked.afterSequence };
  }

  const encoder = new EventEncoder();
  res.writeHead(200, { "content-type": encoder.getContentType(), "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
  res.flushHeaders();
  const abort = new AbortController();
  const onClose = () => abort.abort();
  req.on("close", onClose);
  res.on("close", onClose);
  connection.signal.addEventListener("abort", onClose, { once: true });
  const send = (event: Event) => {
    if (!res.writableEnded) res.write(encoder.encodeSSE({ timestamp: Date.now(), ...event }));
  };
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  try {
    send({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId, protocolVersion: PROTOCOL_VERSION });
    await streamRun(deps, { threadId: input.threadId, runId: input.runId, ...target }, send, abort.signal);
  } catch (error) {
    deps.log.error({ err: error, responseId: target.responseId }, "AG-UI stream failed");
    send({ type: EventType.RUN_ERROR, message: error instanceof DomainError ? error.message : "The run could not be followed; read it with GET /v1/responses/{id}.", code: error instanceof DomainError ? error.code : "internal" });
  } finally {
    clearInterval(heartbeat);
    req.off("close", onClose);
    res.off("close", onClose);
    connection.signal.removeEventListener("abort", onClose);
    res.end();
  }
}
