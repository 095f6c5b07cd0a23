/**
 * Resolution receipts: transient question-lifecycle state, never a record. A receipt is kept
 * in memory for `retainMs` after its submission committed, so a waiter that asked with
 * `includeResolutionId` (even one arriving after the commit) can recognize its own answer.
 */
export class ReceiptStore {
  private receipts = new Map<string, { resolutionId: string; until: number }>();

  constructor(private readonly retainMs = 60_000, private readonly now = () => Date.now()) {}

  record(questionId: string, resolutionId: string): void {
    this.sweep();
    this.receipts.set(questionId, { resolutionId, until: this.now() + this.retainMs });
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
