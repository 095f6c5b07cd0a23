/**
 * Resolution receipts: transient question-lifecycle state, never a record. A receipt is kept
 * in memory for `retainMs` after its submission committed, so a waiter that asked with
 * `includeResolutionId` (even one arriving after the commit) can recognize its own answer.
 *
 * A submission that carries a receipt reserves it once it has claimed the question inside its
 * transaction, and the reservation settles right after the transaction ends: `record` on commit,
 * `release` otherwise. A waiter that already sees the committed answer while the reservation is
 * still open waits for it to settle, so the short gap between the commit and `record` never
 * loses the receipt. A reservation is never returned as a receipt.
 */
export class ReceiptStore {
  private receipts = new Map<string, { resolutionId: string; until: number }>();
  private reservations = new Map<string, { token: symbol; settled: Promise<void>; settle: () => void }>();

  constructor(private readonly retainMs = 60_000, private readonly now = () => Date.now()) {}

  /** Opens a reservation for the submission that claimed `questionId` (before its commit). */
  reserve(questionId: string): symbol {
    const token = Symbol(questionId);
    let settle = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.reservations.get(questionId)?.settle();
    this.reservations.set(questionId, { token, settled, settle });
    return token;
  }

  /** Closes a reservation without a receipt (the submission did not commit); a no-op once settled. */
  release(questionId: string, token: symbol): void {
    const open = this.reservations.get(questionId);
    if (open?.token !== token) return;
    this.reservations.delete(questionId);
    open.settle();
  }

  /** Resolves once the open reservation of `questionId` settles; undefined when none is open. */
  pending(questionId: string): Promise<void> | undefined {
    return this.reservations.get(questionId)?.settled;
  }

  /** Records the receipt of a committed submission (and settles its reservation). */
  record(questionId: string, resolutionId: string): void {
    this.sweep();
    this.receipts.set(questionId, { resolutionId, until: this.now() + this.retainMs });
    const open = this.reservations.get(questionId);
    if (open) {
      this.reservations.delete(questionId);
      open.settle();
    }
  }

  get(questionId: string): string | undefined {
    const entry = this.receipts.get(questionId);
    if (!entry) return undefined;
    if (entry.until < this.now()) {
      this.receipts.delete(questionId);
      return undefined;
    }
    return entry.resolutionId;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.receipts) if (entry.until < now) this.receipts.delete(id);
  }
}
