import { join } from "node:path";
import { insertClaimedResponse } from "../../db/repositories/responses";
import { createSessionIfAbsent, sessionById, sessionOwnerId } from "../../db/repositories/sessions";
import type { TActor } from "../core/actor";
import { agentPolicyOf } from "../core/agent-policy";
import type { TCredential } from "../core/credential";
import { DomainError, notFound, refused } from "../core/errors";
import { newId } from "../core/ids";
import type { TAttachmentInput } from "../core/media";
import { isSessionIdMintedFor } from "../core/session-ids";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import type { Host } from "../host/host";
import { transact } from "../host/transact";
import { prepareWorkspace } from "../host/workspace";
import { admitAttachments, checkAttachments } from "./media/admit-attachments";
import { pendingRunQuestion, routeTextAnswer } from "./questions/route-text-answer";

export type TInvokeInput = { input: unknown; sessionId?: string; agent?: string; metadata?: Record<string, unknown>; attachments?: readonly TAttachmentInput[] };

/** A new response (`afterSequence` 0), or plain text routed as the answer of a pending question. */
export type TInvoked = { responseId: string; sessionId: string; afterSequence: number; answeredQuestionId?: string };

/** Creates (or checks) the session, stores the response and its `response.created` frame, and starts the attempt. */
export async function invokeResponse(
  deps: TDeps & { host: Host },
  actor: TActor,
  body: TInvokeInput,
  source: { via: TTransport; isSourceCurrent: () => boolean; credential?: TCredential | null } = { via: "http", isSourceCurrent: () => true },
): Promise<TInvoked> {
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "invokeAgents" } });
  const agentName = body.agent ?? deps.agents.defaultAgent;
  const agent = deps.agents.find(agentName);
  if (!agent) throw new DomainError("invalid_request", `agent: no agent named ${agentName} is configured.`);
  if (typeof body.input === "string" ? body.input.trim() === "" : body.input === null || Object.keys(body.input as object).length === 0) {
    throw new DomainError("invalid_request", "input must not be empty.");
  }
  const attachments = body.attachments ?? [];
  // Plain text with attachments is a new turn, never the answer to a pending question.
  if (body.sessionId && typeof body.input === "string" && attachments.length === 0) {
    const owner = await sessionOwnerId(deps.db, body.sessionId);
    const pending = owner === actor.userId ? await pendingRunQuestion(deps, body.sessionId) : null;
    if (pending) {
      const routed = await routeTextAnswer(deps, actor, { sessionId: body.sessionId, text: body.input, ...source }, pending);
      return { responseId: routed.responseId, sessionId: routed.sessionId, afterSequence: routed.afterSequence, answeredQuestionId: routed.questionId };
    }
  }
  const script = deps.host.harnesses.parseAgentInput(agent, body.input);
  if (!script.ok) throw new DomainError("invalid_request", script.message);
  // Every limit is checked before the transaction: a refused attachment writes nothing.
  const checked = await checkAttachments(deps.db, deps.config.media, actor.userId, attachments);
  const responseId = newId("resp");
  const created = await transact(deps, async (tx, emit, announce) => {
    let sessionId = body.sessionId;
    let workspaceDir: string | undefined;
    if (sessionId) {
      const session = await sessionById(tx, sessionId);
      // An id handed out to this user by a bare WebSocket connect: its session is stored on first use.
      if (!session && isSessionIdMintedFor(deps.secretKey, actor.userId, sessionId)) await createSession(tx, deps, actor.userId, agent.name, sessionId);
      else if (!session || session.userId !== actor.userId) throw notFound("session", sessionId);
      else workspaceDir = session.workspaceDir;
    } else {
      sessionId = await createSession(tx, deps, actor.userId, agent.name);
    }
    const facts = await admitAttachments(tx, actor.userId, checked);
    // Created already claimed for this process's host: the attempt starts without a lease round trip.
    const row = await insertClaimedResponse(tx, {
      id: responseId,
      sessionId,
      userId: actor.userId,
      agent: agent.name,
      input: body.input,
      metadata: body.metadata ?? {},
      attachments: facts,
      approvalTtlMs: script.value.approvalTtlMs ?? agent.approvalTtlMs,
      clientToolTtlMs: script.value.clientToolTtlMs ?? agent.clientToolTtlMs,
      // The run keeps this policy to its end, whatever a configuration reload changes meanwhile.
      agentPolicy: agentPolicyOf(agent),
      // The run's source: revoking this key or ending this console session revokes its retained authority.
      sourceCredential: source.credential ?? null,
      leaseOwner: deps.host.id,
    }, deps.config.leaseMs);
    if (!row) throw new Error("response insert returned nothing");
    const [frame] = await emit(responseId, [
      { type: "response.created", data: { metadata: body.metadata ?? {} }, frame: true, actorUserId: actor.userId },
      // The facts, never the bytes: the trajectory says what was attached.
      ...(facts.length > 0 ? [{ type: "attachments.admitted", data: { attachments: facts }, frame: false, actorUserId: actor.userId }] : []),
    ]);
    announce({ k: "inbox", change: { kind: "response", responseId } });
    // The row as the commit leaves it (the frame counters moved with the event).
    return { row: { ...row, nextSeq: row.nextSeq + (facts.length > 0 ? 2 : 1), nextFrameSeq: (frame?.sequence ?? 0) + 1 }, sessionId, workspaceDir: workspaceDir ?? join(deps.config.dataDir, "workspaces", sessionId) };
  });
  deps.host.startClaimed({ row: created.row, claim: newId("claim"), steps: [], steeringQueued: false, workspaceDir: created.workspaceDir });
  return { responseId, sessionId: created.sessionId, afterSequence: 0 };
}

/**
 * Creates a session with its own workspace directory; under a given (minted) id, a concurrent
 * first run that stored it already is not an error.
 */
export async function createSession(tx: TDeps["db"], deps: TDeps, userId: string, agent: string, sessionId = newId("sess")): Promise<string> {
  const workspaceDir = join(deps.config.dataDir, "workspaces", sessionId);
  prepareWorkspace(workspaceDir, deps.sandbox);
  await createSessionIfAbsent(tx, { id: sessionId, userId, agent, workspaceDir });
  return sessionId;
}
