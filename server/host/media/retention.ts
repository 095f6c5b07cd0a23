import { deleteUnusedMedia } from "../../../db/repositories/media";
import type { TDeps } from "../deps";

/** Blobs deleted per statement, and statements per sweep: a large backlog is worked off over several sweeps. */
const BATCH = 200;
const BATCHES_PER_SWEEP = 25;

/** How often retention runs: a tenth of the retention, at least the expiry sweep's interval, at most hourly. */
export const mediaSweepIntervalMs = (retentionMs: number, floorMs: number): number => Math.min(Math.max(floorMs, Math.floor(retentionMs / 10)), 3_600_000);

/**
 * Media retention (COUNTERSIGN_MEDIA_RETENTION_DAYS): deletes the blobs no run used within the
 * retention (db/repositories/media.ts says what counts as a use). Every replica may run it: a
 * blob is deleted once, and a run being created with it marks it used first. Returns how many
 * were deleted.
 */
export async function sweepMedia(deps: Pick<TDeps, "db" | "log" | "config">): Promise<number> {
  const retentionMs = deps.config.media.retentionMs;
  if (retentionMs === null) return 0;
  let deleted = 0;
  for (let i = 0; i < BATCHES_PER_SWEEP; i++) {
    const ids = await deleteUnusedMedia(deps.db, retentionMs, BATCH);
    deleted += ids.length;
    if (ids.length < BATCH) break;
  }
  if (deleted > 0) deps.log.info({ deleted }, "media retention: deleted stored files no run used within the retention");
  return deleted;
}
