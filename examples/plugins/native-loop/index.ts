/**
 * A minimal native-loop harness plugin (plugin API 1.2), loaded only through the plugins
 * configuration (never imported by the host). Unlike echo-native, the host does not run its
 * tools: the plugin runs its own loop against the agent's OpenAI-compatible endpoint and its own
 * two tools (`append_note`, `read_notes`, working on `notes.txt` in a directory of the session
 * workspace), and asks the host before each call through `hostCapabilities.runBeforeToolCall`. The
 * host applies the agent's policy (here `append_note` needs a person), confines the call's own
 * `cwd` to the workspace, and records every decision. A decision that needs a person suspends the
 * run; after it the host runs this loop again from the start, and the identical call gets the
 * recorded decision; a call whose output was recorded (`recordToolResult`) is not run again.
 *
 * Plugin API 1.2: the tools handed to `finalizeAgentToolAvailability` carry their `parameters`,
 * so an approver may edit a call's arguments (validated against them) and the loop runs the edited
 * call; `page_title` is marked `client`: the connected client runs it (a client-tool request on
 * /v1) and the loop feeds the client's output to its model. `recordToolResult` returns the result
 * after the host's tool-result middleware; this plugin registers two for its note tools: one
 * withholds `private:` lines of the notes and marks every result `checkedBy`, the other throws
 * when the notes hold the line `!fail-middleware` (to show that a failing middleware is skipped).
 *
 * The endpoint comes from the environment when the plugin registers: COUNTERSIGN_EXAMPLE_MODEL_URL
 * (e.g. http://127.0.0.1:8080/v1), COUNTERSIGN_EXAMPLE_MODEL (default `example`) and the name of
 * the variable holding the API key, COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV.
 *
 * Input: a text, or `{ text, toolExecutionAllow?, probeSettled?, schemas?, reply? }`: `toolExecutionAllow` is
 * handed to `finalizeAgentToolAvailability` (the model still sees every schema); `probeSettled` calls
 * the capabilities of this process's previous attempt (long settled) and reports how they refused;
 * `schemas: false` gives the host the tools without their `parameters` (the model still sees them);
 * `reply: { files?: [paths], artifact?: { fileName, text } }` attaches workspace files and a file
 * made by the loop to the answer (`media.prepareReplyMedia`, returned as the result's `media`);
 * `reply.forge: id` also returns an attachment it did not prepare (the host refuses the result).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import type { TCountersignPlugin, TNativeAttemptParams, TNativeToolDecision } from "../../../plugin-sdk";
import type { TPreparedMedia } from "../../../plugin-sdk/media";

type TReply = { files?: string[]; artifact?: { fileName: string; text: string }; forge?: string };
type TInput = { text: string; toolExecutionAllow?: string[]; probeSettled?: boolean; schemas?: boolean; reply?: TReply };

const TOOLS = [
  {
    name: "append_note",
    description: "Append one line to notes.txt in a directory of the workspace (default: its root).",
    parameters: { type: "object", properties: { text: { type: "string" }, cwd: { type: "string" } }, required: ["text"], additionalProperties: false },
  },
  {
    name: "read_notes",
    description: "Read notes.txt in a directory of the workspace (default: its root).",
    parameters: { type: "object", properties: { cwd: { type: "string" } }, additionalProperties: false },
  },
  {
    name: "page_title",
    description: "The title of the page open in the user's browser (the connected client runs this tool).",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    client: true,
  },
] as const;

/** The lines of read notes the model must not see. */
const PRIVATE_LINE = /^private:.*$/gm;

function parse(input: unknown): TInput | null {
  if (typeof input === "string") return input.trim() ? { text: input } : null;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return null;
  const o = input as Record<string, unknown>;
  if (typeof o.text !== "string" || !o.text.trim()) return null;
  if (o.toolExecutionAllow !== undefined && (!Array.isArray(o.toolExecutionAllow) || o.toolExecutionAllow.some((n) => typeof n !== "string"))) return null;
  if (o.schemas !== undefined && typeof o.schemas !== "boolean") return null;
  const reply = o.reply as TReply | undefined;
  if (reply !== undefined && (reply === null || typeof reply !== "object" || (reply.files !== undefined && !Array.isArray(reply.files)))) return null;
  return { text: o.text, toolExecutionAllow: o.toolExecutionAllow as string[] | undefined, probeSettled: o.probeSettled === true, schemas: o.schemas !== false, ...(reply ? { reply } : {}) };
}

/** The plugin's own tools: they run here, in the directory the host confined and returned. */
function execute(name: string, args: Record<string, unknown>, cwd: string): unknown {
  const file = join(cwd, "notes.txt");
  if (name === "append_note") {
    if (!String(args.text ?? "").trim()) return { error: "Nothing to append: the text is empty." };
    appendFileSync(file, `${String(args.text)}\n`);
    return { appended: String(args.text), lines: readFileSync(file, "utf8").split("\n").filter(Boolean).length };
  }
  if (name === "read_notes") return { notes: existsSync(file) ? readFileSync(file, "utf8") : "" };
  // page_title is client-executed: the host hands the loop the client's output instead.
  return { error: `The tool ${name} does not run in this loop.` };
}

/**
 * The reply's files: workspace files read and stored by the host (`attempt`), and an artifact made
 * here (`artifact`); their attachments and notices are returned with the answer.
 */
async function replyMedia(media: TNativeAttemptParams["hostCapabilities"]["media"], reply: TReply | undefined): Promise<TPreparedMedia | undefined> {
  if (!reply) return undefined;
  const out: TPreparedMedia = { attachments: [], failures: [] };
  if (reply.files?.length) {
    const prepared = await media.prepareReplyMedia({ kind: "attempt", attempt: { paths: reply.files } });
    if (prepared.kind === "attempt") {
      out.attachments.push(...prepared.preparedMedia.attachments);
      out.failures.push(...prepared.preparedMedia.failures);
    }
  }
  if (reply.artifact) {
    const bytes = new TextEncoder().encode(reply.artifact.text);
    const prepared = await media.prepareReplyMedia({ kind: "artifact", buffer: bytes, fileName: reply.artifact.fileName, mediaType: "text/plain", assertCurrent: () => true });
    if (prepared.kind !== "attempt") {
      out.attachments.push(...prepared.payload.media.attachments);
      out.failures.push(...prepared.payload.media.failures);
    }
  }
  // A media id this loop did not get from prepareReplyMedia (another run's file, say): the host refuses the result.
  if (reply.forge) out.attachments.push({ id: reply.forge, name: "forged.txt", mediaType: "text/plain", size: 1, sha256: "0".repeat(64) } as TPreparedMedia["attachments"][number]);
  return out;
}

/** The capabilities of this process's previous attempt, kept only to show that they fail closed once it settled. */
let previous: TNativeAttemptParams["hostCapabilities"] | null = null;

async function probeSettled(): Promise<string> {
  if (!previous) return "no earlier attempt to probe";
  const stale = previous;
  const refusals: string[] = [];
  const attempt = async (what: string, call: () => unknown) => {
    try {
      await call();
      refusals.push(`${what}: accepted`);
    } catch (error) {
      refusals.push(`${what}: ${(error as Error).message}`);
    }
  };
  await attempt("runBeforeToolCall", () => stale.runBeforeToolCall({ toolName: "append_note", args: { text: "late" } }));
  await attempt("finalizeAgentToolAvailability", () => stale.finalizeAgentToolAvailability({ tools: [...TOOLS] }));
  await attempt("recordEvent", () => stale.trajectory.recordEvent("native_loop.late", {}));
  return refusals.join("\n");
}

const plugin: TCountersignPlugin = {
  register(api) {
    api.registerHarness({
      id: "native-loop",
      parseInput: (input) => (parse(input) ? { ok: true } : { ok: false, message: "The native-loop harness takes a text, or { text, toolExecutionAllow?: string[], probeSettled?: boolean, schemas?: boolean, reply?: { files?: string[], artifact?: { fileName, text } } }." }),
      run: async ({ input, agent, hostCapabilities, signal }) => {
        const options = parse(input) as TInput;
        if (options.probeSettled) return { text: await probeSettled() };
        previous = hostCapabilities;
        if (!agent.endpoint) throw new Error("The native-loop agent has no endpoint: set COUNTERSIGN_EXAMPLE_MODEL_URL.");
        // The last filter of the surface: the model sees every schema; only toolExecutionAllow may run.
        // Without `parameters` (schemas: false) the host cannot check an edit: the arguments are not editable.
        const tools = hostCapabilities.finalizeAgentToolAvailability({
          // Only the tools this agent declares (an agents-file agent may declare fewer).
          tools: TOOLS.filter((t) => agent.nativeTools.includes(t.name)).map((t) => (options.schemas === false ? { ...t, parameters: undefined } : t)),
          toolExecutionAllow: options.toolExecutionAllow,
          onPrepared: (surface) => hostCapabilities.trajectory.recordEvent("native_loop.prepared", { ...surface }),
        });
        const client = new OpenAI({ baseURL: agent.endpoint.baseURL, apiKey: agent.endpoint.apiKey ?? "none", defaultHeaders: agent.endpoint.headers, maxRetries: 0 });
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [...(agent.system ? [{ role: "system" as const, content: agent.system }] : []), { role: "user", content: options.text }];
        const usage = { inputTokens: 0 };
        for (let turn = 0; turn < 8; turn++) {
          const completion = await client.chat.completions.create(
            {
              model: agent.model,
              messages,
              tools: tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: { ...TOOLS.find((d) => d.name === t.name)?.parameters } } })),
            },
            { signal },
          );
          usage.inputTokens += completion.usage?.prompt_tokens ?? 0;
          // Live usage, once per completed model response with that response's tokens: the host adds
          // them to the run's total and sends the response.usage frame (a count of 0 is refused).
          hostCapabilities.reportOutputTokens(completion.usage?.completion_tokens ?? 0);
          const message = completion.choices[0]?.message;
          const calls = (message?.tool_calls ?? []).filter((c) => c.type === "function");
          if (calls.length === 0) {
            const media = await replyMedia(hostCapabilities.media, options.reply);
            return { text: message?.content ?? "", usage, ...(media ? { media } : {}) };
          }
          messages.push({ role: "assistant", content: message?.content ?? null, tool_calls: calls });
          for (const call of calls) {
            let output: unknown;
            let parsed: Record<string, unknown> | null = null;
            try {
              parsed = JSON.parse(call.function.arguments || "{}") as Record<string, unknown>;
            } catch {
              output = { error: "The arguments are not valid JSON." };
            }
            if (parsed) {
              // The operation's own working directory goes to the host, which confines it to the workspace.
              const { cwd, ...args } = parsed;
              // A suspension (a person must decide) throws here; it propagates and the run waits.
              const decision: TNativeToolDecision = await hostCapabilities.runBeforeToolCall({ toolName: call.function.name, args, ...(typeof cwd === "string" ? { cwd } : {}) });
              if (!decision.allow) output = { refused: decision.reason, message: decision.message };
              // A client-executed tool: the connected client ran it; its output is the result.
              else if (decision.client) output = decision.client.output;
              else if (decision.replayed?.output !== undefined) output = decision.replayed.output;
              else {
                // Run with the decided (perhaps edited) arguments; the model is fed the result after the host's middleware.
                output = await hostCapabilities.recordToolResult(decision.callId, execute(decision.toolName, decision.args, decision.cwd));
              }
            }
            messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(output) });
          }
        }
        return { text: "The native loop reached its limit of 8 model turns.", usage };
      },
    });
    // The host runs these on the note tools' results (as on its own tools'), before the loop feeds them to the model.
    api.registerAgentToolResultMiddleware(
      (event) => {
        const base = event.result !== null && typeof event.result === "object" && !Array.isArray(event.result) ? (event.result as Record<string, unknown>) : { value: event.result };
        const notes = typeof base.notes === "string" ? { notes: base.notes.replace(PRIVATE_LINE, "[withheld]") } : {};
        return { result: { ...base, ...notes, checkedBy: api.manifest.id } };
      },
      { matcher: ["read_notes", "append_note"] },
    );
    api.registerAgentToolResultMiddleware(
      (event) => {
        if (String((event.result as { notes?: unknown } | null)?.notes ?? "").includes("!fail-middleware")) throw new Error("this middleware fails on purpose");
        return undefined;
      },
      { matcher: ["read_notes"] },
    );
    const baseURL = process.env.COUNTERSIGN_EXAMPLE_MODEL_URL?.trim();
    api.registerAgent({
      name: "native-loop",
      harness: "native-loop",
      model: process.env.COUNTERSIGN_EXAMPLE_MODEL?.trim() || "example",
      description: "The native-loop example plugin's agent: keeps notes in the session workspace; appending one, or reading the title of the user's page, needs a person.",
      tools: [],
      nativeTools: TOOLS.map((t) => t.name),
      approval: { append_note: "always", read_notes: "never", page_title: "always" },
      ...(baseURL ? { endpoint: { baseURL, ...(process.env.COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV ? { apiKeyEnv: process.env.COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV } : {}) } } : {}),
    });
  },
};

export default plugin;
