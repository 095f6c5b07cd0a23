import { and, eq } from "drizzle-orm";
import { clientToolRequests, responseSteps, responses } from "../../db/schema";
import { findAgent } from "../agents/config";
import { type TActor, canDecide, canRead } from "../core/actor";
import { DomainError, notFound } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { transact } from "../host/transact";
import { expireClientTool } from "./expire-pending";

export type TSubmitResult = { clientToolId: string; responseId: string; sessionId: string; resultSequence: number };

/**
 * Consumes a client-tool request exactly once. The output is validated before anything is
 * written (422, request stays pending). Private input goes only to the tool's application
 * handler inside the same transaction; everything stored or streamed is its public response.
 */
export async function submitClientToolResult(
  deps: TDeps,
  actor: TActor,
  input: { requestId: string; output: unknown; via: TTransport },
): Promise<TSubmitResult> {
  const [request] = await deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, input.requestId));
  if (!request || !canRead(actor, request.userId)) throw notFound("client-tool request", input.requestId);
  if (!canDecide(actor, request.userId) || (actor.userId !== request.userId && request.privateInput)) {
    throw new DomainError("forbidden", "Only the user the request belongs to can submit this result.");
  }
  if (request.status !== "pending") {
    if (request.status === "expired") throw new DomainError("expired", "This client-tool request has expired.");
    if (request.status === "cancelled") throw new DomainError("conflict", "The response was cancelled; this request no longer accepts results.");
    throw new DomainError("already_submitted", "A result was already submitted for this request; it is used once.");
  }
  if (request.expiresAt.getTime() <= deps.now().getTime()) {
    await expireClientTool(deps, request.id);
    throw new DomainError("expired", "This client-tool request has expired.");
  }
  const [response] = await deps.db.select({ agent: responses.agent }).from(responses).where(eq(responses.id, request.responseId));
  const tool = findAgent(response?.agent ?? "")?.tools.find((t) => t.name === request.name);
  if (tool?.kind !== "client") throw new DomainError("conflict", `The client tool ${request.name} is no longer configured.`);
  const parsed = tool.outputSchema.safeParse(input.output);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "output"}: ${i.message}`).join("; ");
    throw new DomainError("validation_failed", `The ${request.privateInput ? "input" : "output"} does not match the schema of ${request.name}: ${detail}.`);
  }
  const sequence = await transact(deps, async (tx, emit) => {
    const [won] = await tx
      .update(clientToolRequests)
      .set({ status: "submitted", submittedBy: actor.userId, submittedVia: input.via, submittedAt: deps.now() })
      .where(and(eq(clientToolRequests.id, request.id), eq(clientToolRequests.status, "pending")))
      .returning();
    if (!won) throw new DomainError("already_submitted", "A result was already submitted for this request; it is used once.");
    const [row] = await tx
      .update(responses)
      .set({ status: "in_progress" })
      .where(and(eq(responses.id, request.responseId), eq(responses.status, "requires_action")))
      .returning();
    if (!row) throw new DomainError("conflict", "The response is no longer waiting for this client tool.");
    const output = tool.handlePrivateInput
      ? await tool.handlePrivateInput(parsed.data, { tx, userId: request.userId, sessionId: request.sessionId, secretKey: deps.secretKey })
      : parsed.data;
    await tx.update(clientToolRequests).set({ publicOutput: output }).where(eq(clientToolRequests.id, request.id));
    await tx.update(responses).set({ output: [...row.output, { type: "tool_result", callId: request.callId, name: request.name, output }] }).where(eq(responses.id, row.id));
    await tx.insert(responseSteps).values({ responseId: row.id, key: `tool:${request.callId}`, status: "completed", result: output, completedAt: deps.now() });
    const frames = await emit(row.id, [
      {
        type: "client_tool.submitted",
        data: { clientToolId: request.id, name: request.name, privateInput: request.privateInput, output },
        frame: false,
        actorUserId: actor.userId,
        transport: input.via,
      },
      { type: "response.tool_result", data: { callId: request.callId, name: request.name, output }, frame: true },
    ]);
    return frames[0]?.sequence ?? 0;
  });
  deps.bus.publishInbox({ kind: "client_tool", responseId: request.responseId, id: request.id });
  deps.bus.publishWake(request.responseId, "resume");
  return { clientToolId: request.id, responseId: request.responseId, sessionId: request.sessionId, resultSequence: sequence };
}
