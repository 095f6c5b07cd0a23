import type { Db } from "../../../db/client";
import { adminTrailActors, adminTrailRows, recordAdminEvent, type TAdminTrailFilter, type TAdminTrailRow } from "../../../db/repositories/audit";
import { decodeCursor, type TPage, toPage } from "../../../db/repositories/keyset";
import type { TActor } from "../../core/actor";
import { TRAIL_READER_ROLES, type TAdminWho } from "../../core/admin-trail";
import { refused } from "../../core/errors";
import type { TDeps } from "../../host/deps";

export type { TAdminTrailFilter, TAdminTrailRow };

/** Admins and auditors read the admin trail (the CLI, `null`, too); everyone else gets 403. Nobody edits it. */
function assertTrailReader(actor: TActor | null): void {
  if (actor && !(TRAIL_READER_ROLES as readonly string[]).includes(actor.role)) throw refused("forbidden", { code: "rolesOnly", params: { act: "readTrail" } });
}

/** A trail row as the console, the export and the CLI show it (the keyset position left out). */
export type TAdminTrailEntry = Omit<TAdminTrailRow, "cursorAt">;
const entry = ({ cursorAt: _, ...row }: TAdminTrailRow): TAdminTrailEntry => row;

/** One page of the admin trail, newest first, filtered server-side; `nextCursor` continues with older rows. */
export async function adminTrailPage(
  deps: Pick<TDeps, "db">,
  actor: TActor | null,
  input: TAdminTrailFilter & { cursor?: string | null; limit: number },
): Promise<TPage<TAdminTrailEntry>> {
  assertTrailReader(actor);
  const rows = await adminTrailRows(deps.db, input, decodeCursor(input.cursor), input.limit + 1);
  const page = toPage(rows, input.limit);
  return { rows: page.rows.map(entry), nextCursor: page.nextCursor };
}

/** Every matching trail row, newest first, in batches (for the JSONL export): one batch in memory at a time. */
export async function* adminTrailBatches(deps: Pick<TDeps, "db">, actor: TActor | null, filter: TAdminTrailFilter, batch: number, signal?: AbortSignal): AsyncGenerator<TAdminTrailEntry[]> {
  assertTrailReader(actor);
  let cursor: string | null = null;
  while (!signal?.aborted) {
    const rows = await adminTrailRows(deps.db, filter, decodeCursor(cursor), batch + 1);
    const page = toPage(rows, batch);
    if (page.rows.length > 0) yield page.rows.map(entry);
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

/** The people who appear as actors in the trail, for the actor filter. */
export async function adminTrailPeople(deps: Pick<TDeps, "db">, actor: TActor | null): Promise<Array<{ id: string; name: string; email: string }>> {
  assertTrailReader(actor);
  return adminTrailActors(deps.db);
}

/**
 * Records that the configuration was reloaded (for the code that reloads it): `source` names what
 * was read (a file path, `SIGHUP`…), `changed` the settings that changed (names only, never values
 * that may be secrets). Its own transaction; pass `tx` to commit it with other writes.
 */
export async function recordConfigReloaded(
  deps: Pick<TDeps, "db">,
  who: TAdminWho,
  detail: { source: string; changed: readonly string[] },
  tx?: Db,
): Promise<void> {
  const event = { action: "config.reloaded" as const, targetType: "config", targetId: detail.source, detail: { changed: [...detail.changed] } };
  if (tx) return recordAdminEvent(tx, who, event);
  await deps.db.transaction(async (transaction) => recordAdminEvent(transaction as unknown as Db, who, event));
}
