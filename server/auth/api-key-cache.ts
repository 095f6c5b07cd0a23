import type { Db } from "../../db/client";
import type { EventBus } from "../ports/bus";
import { actorForApiKey, hashKey, KEY_USE_RECORD_MS, recordKeyUse, type TKeyActor } from "./api-keys";

/** How long a looked-up key is trusted without asking the database again. */
export const API_KEY_CACHE_MS = 5000;
const MAX_ENTRIES = 10_000;

/**
 * The actors behind API keys, remembered for a few seconds so a request does not cost a
 * database round trip (a transaction on PostgreSQL) of its own. Revocation still wins at once:
 * every credential change (key revoked, role changed, user disabled or deleted, signed out) is
 * published on the bus, on every replica, and drops that user's entries here. Only keys that
 * were found are remembered (a new key works at once); entries are keyed by the key's hash.
 * A lookup that misses also records the key's use (`last_used_at`), at most once a minute per key:
 * the time this cache last recorded it is carried from the expired entry to the new one.
 */
export class ApiKeyCache {
  private entries = new Map<string, { actor: TKeyActor; until: number; recordedAt: number }>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly db: Db,
    bus: Pick<EventBus, "subscribeCredentials">,
    private readonly ttlMs = API_KEY_CACHE_MS,
  ) {
    this.unsubscribe = bus.subscribeCredentials(({ userId }) => {
      for (const [hash, entry] of this.entries) if (entry.actor.userId === userId) this.entries.delete(hash);
    });
  }

  /** The actor owning an unrevoked key of an active user, or null. */
  async actorFor(apiKey: string): Promise<TKeyActor | null> {
    const hash = hashKey(apiKey);
    const cached = this.entries.get(hash);
    const now = Date.now();
    if (cached && cached.until > now) return cached.actor;
    this.entries.delete(hash);
    const actor = await actorForApiKey(this.db, apiKey);
    if (!actor) return null;
    let recordedAt = cached?.actor.keyId === actor.keyId ? cached.recordedAt : 0;
    if (now - recordedAt >= KEY_USE_RECORD_MS) {
      await recordKeyUse(this.db, actor.keyId, new Date(now));
      recordedAt = now;
    }
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(hash, { actor, until: now + this.ttlMs, recordedAt });
    return actor;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }
}
