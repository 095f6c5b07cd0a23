import type { Db } from "../../../db/client";
import { namesKnownTo } from "../../../db/repositories/display-names";
import type { TActor } from "../../core/actor";
import { READ_ALL_ROLES } from "../../core/vocabulary";

/**
 * Display names for user ids shown in the console (deciders, trajectory actors), each with the
 * email the console shows beside it: whoever may know a person's name knows their email too, so a
 * display name can never pass for someone else's. Operators, admins and auditors see everyone's; a
 * member only those it legitimately knows (others are left out).
 */
export async function userNames(db: Db, actor: TActor, ids: readonly string[]): Promise<Record<string, { name: string; email: string }>> {
  if (ids.length === 0) return {};
  const rows = await namesKnownTo(db, READ_ALL_ROLES.includes(actor.role) ? null : actor.userId, ids);
  return Object.fromEntries(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
}
