import { chmodSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { z } from "zod";
import { controlSocketPath, describeDatabase } from "../../config";
import { CLI_ORIGIN } from "../../core/admin-trail";
import { DomainError } from "../../core/errors";
import { runAdminCommand, ZAdminCommand } from "../../services/console/admin-commands";
import type { TTransportDeps } from "../shared/deps";
import { sendJson } from "../shared/respond";
import { parseBody, readJson } from "./body";
import { sendError } from "./errors";

/** Unix socket paths are limited to about 108 bytes by the kernel. */
const MAX_SOCKET_PATH = 100;

const ZControlRequest = z.strictObject({
  /** The command, as the CLI parsed it from its command line (server/cli/commands.ts). */
  command: ZAdminCommand,
  /** The CLI's OS user, for the admin trail (only the server's OS user and root can connect). */
  osUser: z.string().max(200).nullish(),
});

async function handleControl(deps: TTransportDeps, database: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    if (req.method !== "POST" || req.url !== "/cli") throw new DomainError("not_found", "The control socket answers POST /cli only.");
    const body = parseBody(ZControlRequest, await readJson(req));
    const output = await runAdminCommand(deps, { actor: null, origin: CLI_ORIGIN(body.osUser ?? null) }, body.command);
    if (output.kind === "result") return sendJson(res, 200, { result: output.result, database });
    // An export: JSONL lines as they are read.
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "x-countersign-database": encodeURIComponent(database) });
    for await (const line of output.lines) {
      if (!res.write(`${line}\n`)) await new Promise((resolve) => res.once("drain", resolve));
    }
    res.end();
  } catch (error) {
    if (res.headersSent) res.destroy();
    else sendError(res, error);
  }
}

/**
 * Lets the CLI of the same data directory run its commands in this process (PGlite admits one
 * process per directory): the same administrative service the CLI calls on its own
 * (server/services/console/admin-commands.ts). It listens only on a Unix socket inside the 0700
 * data directory, itself 0600: only the server's own OS user (and root) can connect; approved
 * commands, which run as another user or in a sandbox without the data directory, cannot. There
 * is no TCP route and no token a command could read.
 */
export async function startControlServer(deps: TTransportDeps, dataDir: string): Promise<{ path: string; close: () => Promise<void> } | null> {
  const path = controlSocketPath(dataDir);
  if (path.length > MAX_SOCKET_PATH) {
    deps.log.warn({ path }, "the data directory path is too long for a Unix socket: the CLI works only while the server is stopped");
    return null;
  }
  const database = `${describeDatabase({ pgliteDir: join(dataDir, "pglite") })} (through the running server)`;
  // A socket left by a process that died is stale: the CLI found nobody listening on it.
  rmSync(path, { force: true });
  const server: Server = createServer((req, res) => void handleControl(deps, database, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return {
    path,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(path, { force: true });
    },
  };
}
