import { sql } from "drizzle-orm";
import type { Db } from "../client";

/** Notifies the other replicas: one `pg_notify(channel, payload)` per payload, all in one statement (delivered on commit). */
export async function notifyChannel(tx: Db, channel: string, payloads: readonly string[]): Promise<void> {
  await tx.execute(sql.join([sql`select `, sql.join(payloads.map((p) => sql`pg_notify(${channel}, ${p})`), sql`, `)]));
}
