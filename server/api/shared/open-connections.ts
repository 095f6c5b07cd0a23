import { CREDENTIAL_RECHECK_MS, credentialKey, credentialRefusal, type TCredential } from "../../auth/credential-status";
import { DomainError } from "../../core/errors";
import type { TDeps } from "../../host/deps";

export { CREDENTIAL_RECHECK_MS };

/** At most this many credential checks at once, so a sweep over many users does not drain the pool. */
const SWEEP_CONCURRENCY = 8;

/**
 * One open SSE stream, WebSocket or tRPC subscription. `signal` aborts, with the refusal
 * (a DomainError: `unauthenticated` or `forbidden`) as its reason, once the credential it was
 * admitted with no longer holds; the transport then ends the connection.
 */
export type TOpenConnection = {
  readonly signal: AbortSignal;
  /** Re-checks the credential now (before a frame acts); throws the refusal and ends the connection when it no longer holds. */
  assertCurrent: () => Promise<void>;
  /** Frees the slot; call once the connection ended. */
  release: () => void;
};

type TEntry = { credential: TCredential; abort: AbortController };

/**
 * Every long-lived connection of this process: caps them per user and ends them within a moment of
 * their credential's change (announced on the bus by any replica) or within CREDENTIAL_RECHECK_MS
 * when the announcement was lost.
 */
export class OpenConnections {
  private readonly byUser = new Map<string, Set<TEntry>>();
  private readonly stopListening: () => void;
  private readonly timer: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly deps: Pick<TDeps, "db" | "bus" | "log" | "now">,
    private readonly options: { maxPerUser: number | null; recheckMs?: number },
  ) {
    this.stopListening = deps.bus.subscribeCredentials(({ userId }) => void this.recheck([...(this.byUser.get(userId) ?? [])]));
    this.timer = setInterval(() => void this.sweep(), options.recheckMs ?? CREDENTIAL_RECHECK_MS);
    this.timer.unref();
  }

  /** Takes a slot for one connection of the credential's user; past the cap it throws `too_many_streams`. */
  open(credential: TCredential): TOpenConnection {
    const { maxPerUser } = this.options;
    const entries = this.byUser.get(credential.userId) ?? new Set<TEntry>();
    if (maxPerUser !== null && entries.size >= maxPerUser) {
      // Short enough to be a WebSocket close reason (123 bytes) whole.
      throw new DomainError("too_many_streams", `Too many open streams: at most ${maxPerUser} per user on this server (SSE, WebSockets, subscriptions). Close one and retry.`);
    }
    const entry: TEntry = { credential, abort: new AbortController() };
    entries.add(entry);
    this.byUser.set(credential.userId, entries);
    return {
      signal: entry.abort.signal,
      assertCurrent: async () => {
        if (entry.abort.signal.aborted) throw entry.abort.signal.reason;
        const refusal = await credentialRefusal(this.deps.db, credential, this.deps.now());
        if (!refusal) return;
        this.revoke(entry, refusal);
        throw refusal;
      },
      release: () => {
        entries.delete(entry);
        if (entries.size === 0 && this.byUser.get(credential.userId) === entries) this.byUser.delete(credential.userId);
      },
    };
  }

  close(): void {
    clearInterval(this.timer);
    this.stopListening();
  }

  private revoke(entry: TEntry, refusal: DomainError): void {
    if (!entry.abort.signal.aborted) entry.abort.abort(refusal);
  }

  /** One check per distinct credential (and admitted role), however many connections share it. */
  private async recheck(entries: readonly TEntry[]): Promise<void> {
    const groups = new Map<string, TEntry[]>();
    for (const entry of entries) {
      if (entry.abort.signal.aborted) continue;
      const key = `${credentialKey(entry.credential)}:${entry.credential.role}`;
      groups.set(key, [...(groups.get(key) ?? []), entry]);
    }
    const pending = [...groups.values()];
    const worker = async () => {
      for (let group = pending.shift(); group; group = pending.shift()) {
        const first = group[0] as TEntry;
        try {
          const refusal = await credentialRefusal(this.deps.db, first.credential, this.deps.now());
          if (refusal) for (const entry of group) this.revoke(entry, refusal);
        } catch (error) {
          // The database is unreachable: keep the connection; frames that act re-check and fail closed.
          this.deps.log.warn({ err: error }, "credential re-check failed; will retry");
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, pending.length) }, worker));
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.recheck([...this.byUser.values()].flatMap((entries) => [...entries]));
    } finally {
      this.sweeping = false;
    }
  }
}
