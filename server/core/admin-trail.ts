import { z } from "zod";
import type { TActor } from "./actor";

/**
 * Where an administrative action came from: the console (tRPC), `/v1`, the CLI, the server itself
 * (the demo user at first start), or a single sign-on (a person added, or a role the provider's
 * groups changed).
 */
export const ADMIN_CHANNELS = ["console", "v1", "cli", "system", "sso"] as const;
export type TAdminChannel = (typeof ADMIN_CHANNELS)[number];

/** The administrative actions the admin trail records (`action` of a trail row). */
export const ADMIN_ACTIONS = [
  "user.created",
  "user.disabled",
  "user.enabled",
  "user.deleted",
  "user.offboarded",
  "user.role_changed",
  "user.renamed",
  "user.teams_changed",
  "api_key.created",
  "api_key.revoked",
  "device.pairing_created",
  "device.revoked",
  "grant.revoked",
  "session.access.grant",
  "session.access.revoke",
  "config.reloaded",
  "policy.suggestion_applied",
  "policy.suggestion_dismissed",
  "policy.simulated",
] as const;
export type TAdminAction = (typeof ADMIN_ACTIONS)[number];

/** The roles that read the admin trail; nobody edits it. */
export const TRAIL_READER_ROLES = ["admin", "auditor"] as const;

/** Where a request came from: its channel, the client address over HTTP, the OS user of the CLI. */
export type TAdminOrigin = { channel: TAdminChannel; clientIp: string | null; osUser?: string | null };

/** Who acts, from where: a user (console, `/v1`), or nobody with the data directory's authority (`cli`, `system`). */
export type TAdminWho = { actor: TActor | null; origin: TAdminOrigin };

export const CLI_ORIGIN = (osUser: string | null): TAdminOrigin => ({ channel: "cli", clientIp: null, osUser });
export const SYSTEM_ORIGIN: TAdminOrigin = { channel: "system", clientIp: null };

/** Keys a trail row's detail never holds, whatever a caller passes: secrets and key material. */
const SECRET_KEYS = /pass|secret|token|credential|hash|^api_?key$|^key$/i;

/** The small JSON detail of a trail row, with anything secret-looking left out. */
export function trailDetail(detail: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(detail).filter(([k, v]) => v !== undefined && !SECRET_KEYS.test(k)));
}

const ZDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

/** The admin trail's filters (the same for the console's page, its JSONL export and the CLI). */
export const ZAdminTrailFilter = {
  /** A user id, `cli` / `system` for the actions taken with the data directory's authority, or `sso` for a single sign-on's. */
  actor: z.string().min(1).max(200).optional(),
  action: z.string().min(1).max(64).optional(),
  /** From this moment (inclusive). */
  from: ZDate.optional(),
  /** Until this moment (exclusive). */
  to: ZDate.optional(),
};
