import { migrationState } from "../../db/repositories/observe";
import type { TDeps } from "../host/deps";

export type TNotReadyReason = "database_unreachable" | "database_timeout" | "migrations_pending";
export type TReadiness =
  | { ready: true; database: TDeps["dbKind"]; migrations: number }
  | { ready: false; reason: TNotReadyReason; detail: string };

/**
 * Is this process ready for traffic: the database answers a query within `timeoutMs`, and every
 * migration this build ships is applied. A hung database is "not ready" after the timeout, never
 * a hanging check (the query itself is left to finish or fail on its own).
 */
export async function checkReadiness(deps: Pick<TDeps, "db" | "dbKind">, timeoutMs: number): Promise<TReadiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const state = await Promise.race([migrationState(deps.db), timeout]);
    if (state === "timeout") return { ready: false, reason: "database_timeout", detail: `The database did not answer within ${timeoutMs} ms.` };
    if (!state.current) {
      return { ready: false, reason: "migrations_pending", detail: `The database has ${state.applied} of this build's ${state.expected} migrations applied; start the server once to apply them.` };
    }
    return { ready: true, database: deps.dbKind, migrations: state.applied };
  } catch (error) {
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    // A database without the migrations table at all has none applied.
    if (/__drizzle_migrations|schema "drizzle" does not exist/.test(cause)) return { ready: false, reason: "migrations_pending", detail: "The database has no migrations applied; start the server once to apply them." };
    return { ready: false, reason: "database_unreachable", detail: `The database is not reachable: ${cause.split("\n")[0]?.slice(0, 200)}` };
  } finally {
    clearTimeout(timer);
  }
}
