import { createHash } from "node:crypto";
import { and, eq, gte, inArray, lt, notExists, notInArray, or, sql } from "drizzle-orm";
import { newId } from "../../server/core/ids";
import { TERMINAL_STATUSES } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { media, responses } from "../schema";

/** A stored blob's facts (no bytes). */
export type TStoredMedia = { id: string; ownerId: string; sha256: string; mediaType: string; size: number };

export const sha256Of = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * Stores bytes for `ownerId` unless the owner holds them already (same sha256 and type), and
 * returns the stored row's facts: content-addressed, so attaching a file twice keeps one copy.
 * Storing bytes the owner holds again counts as a use: the retention clock (`created_at`) restarts.
 */
export async function storeMedia(db: Db, input: { ownerId: string; mediaType: string; bytes: Uint8Array; sha256?: string }): Promise<TStoredMedia> {
  const sha256 = input.sha256 ?? sha256Of(input.bytes);
  const [row] = await db
    .insert(media)
    .values({ id: newId("media"), ownerId: input.ownerId, sha256, mediaType: input.mediaType, size: input.bytes.byteLength, data: input.bytes })
    .onConflictDoUpdate({ target: [media.ownerId, media.sha256, media.mediaType], set: { createdAt: sql`now()` } })
    .returning({ id: media.id, ownerId: media.ownerId, sha256: media.sha256, mediaType: media.mediaType, size: media.size });
  if (!row) throw new Error("media upsert returned no row");
  return row;
}

/**
 * Marks `ids` of `ownerId` as used now (a run was given them again), so retention does not take
 * them while that run is being created; returns the ids that are still stored.
 */
export async function touchMedia(db: Db, ownerId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(media)
    .set({ createdAt: sql`now()` })
    .where(and(eq(media.ownerId, ownerId), inArray(media.id, [...ids])))
    .returning({ id: media.id });
  return rows.map((r) => r.id);
}

/**
 * Media retention: deletes up to `limit` blobs last stored or attached more than `retentionMs`
 * ago (by the database's clock) that no run uses any more, and returns their ids. A run uses a
 * blob when it was given it (`responses.attachments`) or its agent attached it (an `attachment`
 * output item) and the run is not over yet or was created, updated or finished within the
 * retention. The blob's owner is the run's owner (media is per owner).
 */
export async function deleteUnusedMedia(db: Db, retentionMs: number, limit: number): Promise<string[]> {
  const cutoff = sql`now() - make_interval(secs => ${retentionMs / 1000})`;
  const usedByARecentRun = db
    .select({ one: sql`1` })
    .from(responses)
    .where(
      and(
        eq(responses.userId, media.ownerId),
        or(notInArray(responses.status, [...TERMINAL_STATUSES]), gte(responses.createdAt, cutoff), gte(responses.updatedAt, cutoff), gte(responses.completedAt, cutoff)),
        or(
          sql`${responses.attachments} @> jsonb_build_array(jsonb_build_object('id', ${media.id}))`,
          sql`${responses.output} @> jsonb_build_array(jsonb_build_object('type', 'attachment', 'id', ${media.id}))`,
        ),
      ),
    );
  const due = db
    .select({ id: media.id })
    .from(media)
    .where(and(lt(media.createdAt, cutoff), notExists(usedByARecentRun)))
    .limit(limit);
  const deleted = await db.delete(media).where(inArray(media.id, due)).returning({ id: media.id });
  return deleted.map((r) => r.id);
}

/** The facts of `ids` that `ownerId` holds (others' ids are simply absent). */
export async function mediaFactsOf(db: Db, ownerId: string, ids: readonly string[]): Promise<TStoredMedia[]> {
  if (ids.length === 0) return [];
  return db
    .select({ id: media.id, ownerId: media.ownerId, sha256: media.sha256, mediaType: media.mediaType, size: media.size })
    .from(media)
    .where(and(eq(media.ownerId, ownerId), inArray(media.id, [...ids])));
}

/** The bytes of `ids` that `ownerId` holds, keyed by id. */
export async function mediaBytesOf(db: Db, ownerId: string, ids: readonly string[]): Promise<Map<string, Uint8Array>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: media.id, data: media.data })
    .from(media)
    .where(and(eq(media.ownerId, ownerId), inArray(media.id, [...ids])));
  return new Map(rows.map((r) => [r.id, r.data]));
}

/** How many blobs the store holds (all owners): what tests compare to prove nothing was written. */
export async function mediaCount(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(media);
  return Number(row?.n ?? 0);
}
