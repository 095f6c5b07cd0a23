import { lockClientToolRequest, markClientToolSubmitted, storeClientToolPublicOutput } from "../../db/repositories/client-tools";
import { responseAgent } from "../../db/repositories/responses";
import { type TActor, canDecide, canRead } from "../core/actor";
import { DomainError, notFound } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import type { TRunDeps } from "../host/deps";
import { resumeWith } from "../host/pending/contract";
import { expirePending } from "../host/pending/kinds";
import { secretSealer } from "../host/secret-store";
import { nativeClientTool } from "../host/tool-surface";
import { transact } from "../host/transact";

export type TSubmitResult = { clientToolId: string; responseId: string; sessionId: string; resultSequence: number };

/**
 * Consumes a client-tool request exactly once. The output is validated before anything is
 * written (422, request stays pending). Private input goes only to the tool's application
 * handler inside the same transaction; everything stored or streamed is its public response.
 */
export async function submitClientToolResult(deps: TRunDeps, actor: TActor, input: { requestId: string; output: unknown; via: TTransport }): Promise<TSubmitResult> {
  const outcome = await transact(deps, async (tx, emit, announce) => {
    const request = await lockClientToolRequest(tx, input.requestId);
    if (!request || !canRead(actor, request.userId)) throw notFound("clientToolRequest", input.requestId);
    if (!canDecide(actor, request.userId) || (actor.userId !== request.userId && request.privateInput)) {
      throw new DomainError("forbidden", "Only the user the request belongs to can submit this result.");
    }
    if (request.status !== "pending") {
      if (request.status === "expired") throw new DomainError("expired", "This client-tool request has expired.");
      if (request.status === "cancelled") throw new DomainError("conflict", "The response was cancelled; this request no longer accepts results.");
      throw new DomainError("already_submitted", "A result was already submitted for this request; it is used once.");
    }
    if (request.expiresAt.getTime() <= deps.now().getTime()) return { expired: true as const };
    const agent = deps.agents.find((await responseAgent(tx, request.responseId)) ?? "");
    // A native-loop agent's client-executed native tool opens the same request (server/host/tool-surface.ts).
    const tool = agent?.tools.find((t) => t.name === request.name) ?? nativeClientTool(agent, request.name) ?? undefined;
    if (tool?.kind !== "client") throw new DomainError("conflict", `The client tool ${request.name} is no longer configured.`);
    const parsed = tool.outputSchema.safeParse(input.output);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "output"}: ${i.message}`).join("; ");
      throw new DomainError("validation_failed", `The ${request.privateInput ? "input" : "output"} does not match the schema of ${request.name}: ${detail}.`);
    }
    await markClientToolSubmitted(tx, request.id, { userId: actor.userId, via: input.via, at: deps.now() });
    const output = tool.handlePrivateInput
      ? await tool.handlePrivateInput(parsed.data, { tx, userId: request.userId, sessionId: request.sessionId, secrets: secretSealer(deps.secretKey) })
      : parsed.data;
    await storeClientToolPublicOutput(tx, request.id, output);
    announce({ k: "inbox", change: { kind: "client_tool", responseId: request.responseId, id: request.id } });
    const events = [
      {
        type: "client_tool.submitted",
        data: { clientToolId: request.id, name: request.name, privateInput: request.privateInput, output },
        frame: false,
        actorUserId: actor.userId,
        transport: input.via,
      },
    ];
    const pending = { type: "client_tool" as const, id: request.id, callId: request.callId };
    const resumed = await resumeWith(deps, deps.host, tx, emit, request.responseId, { pending, settlement: { type: "client_tool", output }, events });
    return { request, resumed };
  });
  if ("expired" in outcome) {
    await expirePending(deps, deps.host, { type: "client_tool", id: input.requestId });
    throw new DomainError("expired", "This client-tool request has expired.");
  }
  deps.host.startClaimed(outcome.resumed.run);
  const { request } = outcome;
  return { clientToolId: request.id, responseId: request.responseId, sessionId: request.sessionId, resultSequence: outcome.resumed.sequence };
}
