import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { runCommand } from "../../cli/commands";
import { DomainError } from "../../core/errors";
import { parseBody, readJson } from "./body";
import { sendError, sendJson } from "./errors";
import type { TV1Deps } from "./v1";

/**
 * Runs a CLI command for the CLI of the same data directory (PGlite admits one process).
 * Only from loopback, only with the per-start token the server wrote into the data directory.
 */
export async function handleControl(deps: TV1Deps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const token = String(req.headers["x-countersign-control"] ?? "");
    const expected = deps.controlToken ?? "";
    const loopback = ["127.0.0.1", "::1", "::ffff:127.0.0.1"].includes(req.socket.remoteAddress ?? "");
    const ok = expected.length > 0 && token.length === expected.length && timingSafeEqual(Buffer.from(token), Buffer.from(expected));
    if (req.method !== "POST" || !loopback || !ok) throw new DomainError("not_found", "There is no route /internal/cli.");
    const body = parseBody(z.strictObject({ argv: z.array(z.string().max(1000)).max(20) }), await readJson(req));
    sendJson(res, 200, await runCommand(deps, body.argv));
  } catch (error) {
    sendError(res, error);
  }
}
