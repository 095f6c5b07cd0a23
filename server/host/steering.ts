import { and, asc, eq, inArray, lte } from "drizzle-orm";
import type { Db } from "../../db/client";
import { responses, steeringMessages } from "../../db/schema";
import { newId } from "../core/ids";
import type { TAssertCurrent, TInjectionAuthorityKind, TInjectionSettlement } from "../core/runtime";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "./deps";
import type { TEmit } from "./transact";
import { transact } from "./transact";

type TSource = { assertCurrent: TAssertCurrent; onSettled?: (outcome: TInjectionSettlement) => void };

/**
 * Guarded steering of running responses. Queued messages are durable rows; a source-bound
 * message also keeps its source assertion here, in the process that received it. The assertion
 * and the live-run check run synchronously right before the queue insert and again right before
 * the dispatch commit; once revoked, a message stays rejected.
 */
export class SteeringDesk {
  private sources = new Map<string, TSource>();

  constructor(private readonly deps: TDeps) {}

  /** Queues a message; throws a sentence when the run is not live or the source is not current. */
  async queue(input: {
    responseId: string;
    sessionId: string;
    userId: string;
    text: string;
    via: TTransport;
    authorityKind: TInjectionAuthorityKind;
    assertCurrent: TAssertCurrent;
    onSettled?: (outcome: TInjectionSettlement) => void;
  }): Promise<{ id: string; sequence: number } | { refused: string }> {
    const id = newId("steer");
    return transact(this.deps, async (tx, emit) => {
      const [run] = await tx.select({ status: responses.status }).from(responses).where(eq(responses.id, input.responseId)).for("update");
      const live = run?.status === "in_progress" || run?.status === "requires_action";
      // Synchronous with the insert below: no await between the check and the queue mutation.
      if (!live || !isCurrent(input.assertCurrent)) {
        return { refused: live ? "The source of this message is no longer current." : "The response is not running; steering is closed." };
      }
      if (input.authorityKind === "source-bound") this.sources.set(id, { assertCurrent: input.assertCurrent, onSettled: input.onSettled });
      else if (input.onSettled) this.sources.set(id, { assertCurrent: () => true, onSettled: input.onSettled });
      await tx.insert(steeringMessages).values({ id, responseId: input.responseId, sessionId: input.sessionId, userId: input.userId, text: input.text, authorityKind: input.authorityKind, via: input.via });
      const [frame] = await emit(input.responseId, [{ type: "steer.queued", data: { steerId: id, authorityKind: input.authorityKind, chars: input.text.length }, frame: true, actorUserId: input.userId, transport: input.via }]);
      return { id, sequence: frame?.sequence ?? 0 };
    });
  }

  /**
   * Claims the queued messages of a response for model turn `turn` inside the caller's
   * transaction: each is re-checked right before its commit; revoked ones are rejected for good
   * without affecting the others. Returns the committed texts in order.
   */
  async claim(tx: Db, emit: TEmit, responseId: string, turn: number, isRunLive: () => boolean): Promise<string[]> {
    const queued = await tx.select().from(steeringMessages).where(and(eq(steeringMessages.responseId, responseId), eq(steeringMessages.status, "queued"))).orderBy(asc(steeringMessages.createdAt));
    const committed: string[] = [];
    for (const row of queued) {
      const source = this.sources.get(row.id);
      const current = isRunLive() && (row.authorityKind === "run" || (source !== undefined && isCurrent(source.assertCurrent)));
      const outcome: TInjectionSettlement = current ? "committed" : "rejected";
      const reason = current ? null : source ? "The source was revoked before dispatch." : "The source of this message is not held by this replica; source-bound input is never dispatched unchecked.";
      await tx.update(steeringMessages).set({ status: outcome, reason, committedTurn: current ? turn : null, settledAt: this.deps.now() }).where(and(eq(steeringMessages.id, row.id), eq(steeringMessages.status, "queued")));
      await emit(responseId, [{ type: current ? "steer.committed" : "steer.rejected", data: { steerId: row.id, turn, ...(reason ? { reason } : {}) }, frame: true }]);
      if (current) committed.push(row.text);
      this.settle(row.id, outcome);
    }
    return committed;
  }

  /** Cancels whatever is still queued when the response settles (admission is frozen there). */
  async cancelQueued(tx: Db, emit: TEmit, responseId: string): Promise<void> {
    const rows = await tx
      .update(steeringMessages)
      .set({ status: "cancelled", reason: "The response settled before this message was used.", settledAt: this.deps.now() })
      .where(and(eq(steeringMessages.responseId, responseId), eq(steeringMessages.status, "queued")))
      .returning({ id: steeringMessages.id });
    if (rows.length > 0) await emit(responseId, rows.map((r) => ({ type: "steer.cancelled", data: { steerId: r.id }, frame: true })));
    for (const r of rows) this.settle(r.id, "cancelled");
  }

  /** Texts committed up to `turn`, for rebuilding the conversation on replay. */
  async committedUpTo(db: Db, responseId: string, turn: number): Promise<Map<number, string[]>> {
    const rows = await db
      .select()
      .from(steeringMessages)
      .where(and(eq(steeringMessages.responseId, responseId), inArray(steeringMessages.status, ["committed"]), lte(steeringMessages.committedTurn, turn)))
      .orderBy(asc(steeringMessages.createdAt));
    const byTurn = new Map<number, string[]>();
    for (const r of rows) byTurn.set(r.committedTurn ?? 0, [...(byTurn.get(r.committedTurn ?? 0) ?? []), r.text]);
    return byTurn;
  }

  private settle(id: string, outcome: TInjectionSettlement): void {
    const source = this.sources.get(id);
    this.sources.delete(id);
    try {
      source?.onSettled?.(outcome);
    } catch {}
  }
}

/** Only a literal true counts; a throw is a revocation. */
function isCurrent(assertCurrent: TAssertCurrent): boolean {
  try {
    return assertCurrent() === true;
  } catch {
    return false;
  }
}
