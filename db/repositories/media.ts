import { createHash } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { newId } from "../../server/core/ids";
import type { Db } from "../client";
import { media } from "../schema";

/** A stored blob's facts (no bytes). */
export type TStoredMedia = { id: string; ownerId: string; sha256: string; mediaType: string; size: number };

export const sha256Of = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * Stores bytes for `ownerId` unless the owner holds them already (same sha256 and type), and
 * returns the stored row's facts: content-addressed, so attaching a file twice keeps one copy.
 */
export async function storeMedia(db: Db, input: { ownerId: string; mediaType: string; bytes: Uint8Array; sha256?: string }): Promise<TStoredMedia> {
  const sha256 = input.sha256 ?? sha256Of(input.bytes);
  const [inserted] = await db
    .insert(media)
    .values({ id: newId("media"), ownerId: input.ownerId, sha256, mediaType: input.mediaType, size: input.bytes.byteLength, data: input.bytes })
    .onConflictDoNothing({ target: [media.ownerId, media.sha256, media.mediaType] })
    .returning({ id: media.id });
  if (inserted) return { id: inserted.id, ownerId: input.ownerId, sha256, mediaType: input.mediaType, size: input.bytes.byteLength };
  const [existing] = await db
    .select({ id: media.id, ownerId: media.ownerId, sha256: media.sha256, mediaType: media.mediaType, size: media.size })
    .from(media)
    .where(and(eq(media.ownerId, input.ownerId), eq(media.sha256, sha256), eq(media.mediaType, input.mediaType)));
  if (!existing) throw new Error("media insert conflicted but no row was found");
  return existing;
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
