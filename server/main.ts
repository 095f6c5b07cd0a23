import { join } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import next from "next";
import pino from "pino";
import { migrateDb, openDb } from "../db/client";
import { backfillNameKeys } from "../db/repositories/display-names";
import { startControlServer } from "./api/http/control";
import { createApp } from "./app";
import { SYSTEM_ORIGIN } from "./core/admin-trail";
import { loadConfig } from "./config";
import { ensureDemoOperator } from "./demo";

/** Stop signals arriving this soon after the first are the same stop (one signal sent to the whole process group, delivered several times). */
const SAME_STOP_MS = 1000;

/** Next.js serves the console pages (its development server unless NODE_ENV=production); skipped with COUNTERSIGN_PAGES=off (API-only, e.g. tests). */
async function loadPages(port: number, dev: boolean) {
  const app = next({ dev, dir: process.cwd(), hostname: "127.0.0.1", port });
  await app.prepare();
  const handle = app.getRequestHandler();
  const upgrade = app.getUpgradeHandler();
  return {
    handle: async (req: IncomingMessage, res: ServerResponse) => handle(req, res),
    upgrade: async (req: IncomingMessage, socket: Duplex, head: Buffer) => upgrade(req, socket, head),
  };
}

/** The Countersign process: config, database + migrations, host, and one HTTP server. */
async function main(): Promise<void> {
  // Everything the server creates (data directory, secrets, PGlite files, logs) is owner-only.
  process.umask(0o077);
  // Every variable is read and checked here: a bad value (an agents file's bad field too) stops the start before the database is opened.
  const config = loadConfig();
  const log = pino({ level: config.logLevel, redact: ["req.headers.authorization", "req.headers.cookie", "*.apiKey", "*.password"] });
  const db = await openDb({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : join(config.dataDir, "pglite"), poolSize: config.dbPool });
  await migrateDb(db);
  // Display-name keys are computed in JavaScript (NFKC): written here for users from before them.
  const shared = await backfillNameKeys(db.db);
  if (shared.length > 0) log.warn({ users: shared }, "These users share a display name with an older user (from before names had to differ); rename them with `npm run cli -- user rename USER NAME`");
  const pages = config.pages ? await loadPages(config.port, config.development) : undefined;
  const app = await createApp({ db, config, log, pages });
  const url = config.publicUrl ?? `http://localhost:${(app.server.address() as { port: number }).port}`;
  const demo = await ensureDemoOperator(db.db, app.deps.auth, config.dataDir, url);
  if (demo) console.log(`\n${demo}`);
  // Lets the CLI reach this process instead of opening the same PGlite directory twice.
  const control = db.kind === "pglite" ? await startControlServer(app.deps, config.dataDir) : null;
  log.info({ url, database: db.kind, sandbox: app.deps.sandbox.mode }, "Countersign is listening");
  /** When the first stop signal arrived (performance.now()); null while running. */
  let firstSignalAt: number | null = null;
  /** A later signal cut the drain short: the process exits 1 whichever stop reaches its exit first. */
  let forced = false;
  // SIGTERM drains: no new runs or decisions here, running attempts finish within the window, then exit.
  // A supervisor that signals the whole process group (systemd's KillMode=control-group, Ctrl-C, a
  // shell entrypoint) makes one stop arrive several times: from it, and forwarded by each npm above
  // this process. Signals within SAME_STOP_MS of the first are that one stop; a later one does not
  // wait for the window (nor does SIGINT).
  const stop = async (signal: NodeJS.Signals) => {
    if (firstSignalAt !== null) {
      if (performance.now() - firstSignalAt < SAME_STOP_MS) {
        log.debug({ signal }, "the same stop, delivered again: ignored");
        return;
      }
      log.warn({ signal }, "a second signal: stopping without waiting for running attempts");
      forced = true;
      await app.drain(0).catch(() => {});
      process.exit(1);
    }
    firstSignalAt = performance.now();
    const windowMs = signal === "SIGTERM" ? config.drainMs : 0;
    log.info({ signal, drainMs: windowMs, running: app.deps.host.activeCount }, "draining: refusing new runs and decisions");
    const drained = await app.drain(windowMs).catch((error: unknown) => {
      log.error({ err: error }, "drain failed");
      return null;
    });
    log.info({ finished: drained?.finished, interrupted: drained?.interrupted.length }, "shutting down");
    await control?.close().catch(() => {});
    await app.close().catch(() => {});
    await db.close().catch(() => {});
    // The first stop may get here before the second signal's own exit: that stop still did not wait.
    process.exit(forced ? 1 : 0);
  };
  // SIGHUP re-reads COUNTERSIGN_AGENTS_FILE: the next runs use it, runs already started keep theirs; a bad file keeps the old one (logged).
  process.on("SIGHUP", () => {
    void app.deps.agentsConfig?.reload({ who: { actor: null, origin: SYSTEM_ORIGIN }, via: "signal" });
  });
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
