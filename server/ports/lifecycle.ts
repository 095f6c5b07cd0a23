import type { Db } from "../../db/client";
import type { TAnnouncement } from "./bus";

/**
 * Queues the notifications about what a transaction announced, inside that transaction (types
 * only): lifecycle webhooks (approval/question resolved, response completed/failed) and the
 * updates of Slack messages about settled approvals commit with their change. `transact`
 * (server/host/transact.ts) calls it; server/notify/lifecycle.ts implements it; server/app.ts
 * wires it when notifications are configured.
 */
export type TLifecycleNotifier = (tx: Db, batch: readonly TAnnouncement[], now: Date) => Promise<void>;
