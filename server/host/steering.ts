import type { Db } from "../../db/client";
import { lockResponseStatus } from "../../db/repositories/responses";
import { cancelQueuedSteeringMessages, commitSteeringToTurn, insertSteeringMessage, queuedSteeringOf, rejectSteeringMessage } from "../../db/repositories/steering";
import type { TFrame, TNewEvent } from "../core/frames";
import { newId } from "../core/ids";
import { createInjectionGuard, isAssertionCurrent, type TAssertCurrent, type TInjectionAuthorityKind, type TInjectionSettlement } from "../core/runtime";
import type { TTransport } from "../core/vocabulary";
import { isHint } from "./bus";
import type { TFrameHint } from "../ports/bus";
import type { TDeps } from "./deps";
import type { TEmit } from "./transact";
import { transact } from "./transact";

type TSource = { responseId: string; onSettled?: (outcome: TInjectionSettlement) => void };

/** A queued message that passed its checks right before dispatch; it commits with the model turn that used it. */
export type TTakenSteering = { id: string; text: string };

const REVOKED = "The source was revoked before dispatch.";

const SETTLED_FRAMES: Record<string, TInjectionSettlement> = { "steer.committed": "committed", "steer.rejected": "rejected", "steer.cancelled": "cancelled" };

/**
 * Guarded steering of running responses. Queued messages are durable rows; each message also
 * keeps its assertion here, in the process that received it (a source-bound message from another
 * replica is never dispatched unchecked). The assertion and the live-run check run synchronously
 * right before the queue insert, right before each dispatch to the model and before each retry
 * of it; once revoked, a message stays rejected and the others still go. A message commits in
 * the same transaction as the model turn that used it, so a turn that never happened uses
 * nothing. Settlement callbacks fire once, after the outcome is stored (from the committed frames).
 */
export class SteeringDesk {
  private sources = new Map<string, TSource>();
  private guard = createInjectionGuard();
  private watches = new Map<string, () => void>();

  constructor(private readonly deps: TDeps) {}

  /** Queues a message; returns a sentence when the run is not live or the source is not current. */
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
    try {
      return await transact(this.deps, async (tx, emit) => {
        const status = await lockResponseStatus(tx, input.responseId);
        const live = status === "in_progress" || status === "requires_action";
        if (!live) return { refused: "The response is not running; steering is closed." };
        // Synchronous with the insert below: no await between the check and the queue mutation.
        if (!isAssertionCurrent(input.assertCurrent)) return { refused: "The source of this message is no longer current." };
        // Held before the commit, so a claim racing this insert always finds the assertion.
        this.hold(id, { responseId: input.responseId, onSettled: input.onSettled }, input.assertCurrent);
        await insertSteeringMessage(tx, { id, responseId: input.responseId, sessionId: input.sessionId, userId: input.userId, text: input.text, authorityKind: input.authorityKind, via: input.via });
        const [frame] = await emit(input.responseId, [{ type: "steer.queued", data: { steerId: id, authorityKind: input.authorityKind, chars: input.text.length }, frame: true, actorUserId: input.userId, transport: input.via }]);
        return { id, sequence: frame?.sequence ?? 0 };
      });
    } catch (error) {
      this.release(id);
      throw error;
    }
  }

  /**
   * Right before a model turn, inside the caller's transaction: rejects for good every queued
   * message whose source is revoked (without affecting the others) and returns, in order, those
   * that may go to the model. They stay queued until {@link commitTaken} commits them with the
   * turn. While the run is not live nothing is taken or rejected: settlement cancels them.
   */
  async take(tx: Db, emit: TEmit, responseId: string, turn: number, isRunLive: () => boolean): Promise<TTakenSteering[]> {
    const queued = await queuedSteeringOf(tx, responseId);
    const taken: TTakenSteering[] = [];
    const rejected: Array<{ id: string; reason: string }> = [];
    for (const row of queued) {
      if (!isRunLive()) return [];
      const verdict = this.guard.check(row.id);
      // A run-authority message queued on another replica carries only the backing-run check.
      if (verdict === "current" || (verdict === "unheld" && row.authorityKind === "run")) taken.push({ id: row.id, text: row.text });
      else rejected.push({ id: row.id, reason: verdict === "revoked" ? REVOKED : "The source of this message is not held by this replica; source-bound input is never dispatched unchecked." });
    }
    await emit(responseId, await this.reject(tx, turn, rejected));
    return taken;
  }

  /**
   * The synchronous check right before each dispatch of taken messages and before each retry:
   * splits them into those that may still go to the model and those whose source was revoked
   * since {@link take} (rejected with the step, or at settlement if the step never commits).
   */
  recheck(taken: readonly TTakenSteering[]): { dispatched: TTakenSteering[]; revoked: TTakenSteering[] } {
    const { current, revoked } = this.guard.split(taken);
    return { dispatched: current, revoked };
  }

  /** Commits the dispatched messages to `turn` and rejects the revoked ones, inside the step's transaction. */
  async commitTaken(tx: Db, emit: TEmit, responseId: string, turn: number, dispatched: readonly TTakenSteering[], revoked: readonly TTakenSteering[]): Promise<void> {
    await emit(
      responseId,
      await this.reject(
        tx,
        turn,
        revoked.map((r) => ({ id: r.id, reason: REVOKED })),
      ),
    );
    if (dispatched.length === 0) return;
    const ids = dispatched.map((d) => d.id);
    const updated = await commitSteeringToTurn(tx, ids, turn, this.deps.now());
    const done = new Set(updated.map((u) => u.id));
    await emit(
      responseId,
      ids.filter((id) => done.has(id)).map((id) => ({ type: "steer.committed", data: { steerId: id, turn }, frame: true })),
    );
  }

  /**
   * Cancels whatever is still queued when the response settles (admission is frozen there), and
   * returns the events that say so, for the caller to append before its terminal frame.
   */
  async cancelQueued(tx: Db, responseId: string): Promise<TNewEvent[]> {
    // A message found revoked before dispatch stays rejected, even when its turn never committed.
    const revoked = this.revokedOf(responseId);
    const rejected = await this.reject(tx, null, revoked.map((id) => ({ id, reason: REVOKED })));
    return [...rejected, ...(await cancelQueuedSteering(this.deps, tx, responseId))];
  }

  /**
   * Whether settling `responseId` needs more than the one cancelling statement: a message held
   * here whose source was revoked is rejected first, one statement each.
   */
  hasRevoked(responseId: string): boolean {
    return this.revokedOf(responseId).length > 0;
  }

  private revokedOf(responseId: string): string[] {
    return [...this.sources].filter(([id, source]) => source.responseId === responseId && this.guard.isRevoked(id)).map(([id]) => id);
  }

  /** Rejects queued messages for good; returns the events that say so. */
  private async reject(tx: Db, turn: number | null, rejected: ReadonlyArray<{ id: string; reason: string }>): Promise<TNewEvent[]> {
    const events: TNewEvent[] = [];
    for (const { id, reason } of rejected) {
      const row = await rejectSteeringMessage(tx, id, reason, this.deps.now());
      if (row) events.push({ type: "steer.rejected", data: { steerId: id, ...(turn === null ? {} : { turn }), reason }, frame: true });
    }
    return events;
  }

  /** Keeps a message's assertion in this process and watches its response's frames for the stored outcome. */
  private hold(id: string, source: TSource, assertCurrent: TAssertCurrent): void {
    this.sources.set(id, source);
    this.guard.hold(id, assertCurrent);
    if (this.watches.has(source.responseId)) return;
    const responseId = source.responseId;
    this.watches.set(
      responseId,
      this.deps.bus.subscribeFrames(responseId, (frame) => this.onFrame(responseId, frame)),
    );
  }

  private onFrame(responseId: string, frame: TFrame | TFrameHint): void {
    if (isHint(frame)) return;
    const outcome = SETTLED_FRAMES[frame.type];
    if (outcome && typeof frame.steerId === "string") this.settle(frame.steerId, outcome);
    else if (frame.type === "response.completed" && frame.status !== "requires_action") {
      // Settled by a path that left nothing queued for us to see: whatever is still held is cancelled.
      for (const [id, source] of this.sources) if (source.responseId === responseId) this.settle(id, "cancelled");
    }
  }

  /** Reports the stored outcome once: the source is released first, so a repeated frame finds nothing. */
  private settle(id: string, outcome: TInjectionSettlement): void {
    const source = this.release(id);
    try {
      source?.onSettled?.(outcome);
    } catch {}
  }

  private release(id: string): TSource | undefined {
    const source = this.sources.get(id);
    this.sources.delete(id);
    this.guard.release(id);
    if (source && ![...this.sources.values()].some((s) => s.responseId === source.responseId)) {
      this.watches.get(source.responseId)?.();
      this.watches.delete(source.responseId);
    }
    return source;
  }
}

/**
 * Cancels the still-queued steering messages of a response that is settling, inside the
 * caller's transaction, and returns the events that say so, which the caller appends before its
 * terminal frame. Every path that settles a response calls it.
 */
export async function cancelQueuedSteering(deps: Pick<TDeps, "now">, tx: Db, responseId: string): Promise<TNewEvent[]> {
  const rows = await cancelQueuedSteeringMessages(tx, { id: responseId, at: deps.now() });
  rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return rows.map((r) => ({ type: "steer.cancelled", data: { steerId: r.id }, frame: true }));
}
