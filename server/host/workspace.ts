import { chmodSync, chownSync, existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { sessionWorkspaceDir } from "../../db/repositories/workspaces";
import { cwdRefusalSentence, type TCwdRefusal } from "../core/error-reasons";
import type { TExecSandbox } from "../tools/exec-sandbox";
import type { TDeps } from "./deps";

/** The working directory of a session's runs: its own, or one under the data directory. */
export async function sessionWorkspace(deps: Pick<TDeps, "db" | "config">, sessionId: string): Promise<string> {
  return (await sessionWorkspaceDir(deps.db, sessionId)) ?? join(deps.config.dataDir, "workspaces", sessionId);
}

/**
 * Makes the data directory owner-only (0700): approved commands run as another user or in a
 * sandbox where it is absent, so neither the auth secret, the secret key, the PGlite files nor the
 * control socket are reachable from them. Existing installations are tightened at boot.
 */
export function secureDataDir(dataDir: string): void {
  for (const dir of [dataDir, join(dataDir, "workspaces")]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
}

/**
 * Creates a session workspace (0700) owned by the user commands run as, so a command can write
 * there and nowhere else of the data directory. Returns its real path (what the sandbox binds).
 */
export function prepareWorkspace(dir: string, sandbox: Pick<TExecSandbox, "runAs">): string {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (sandbox.runAs) {
    const st = statSync(dir);
    if (st.uid !== sandbox.runAs.uid) chownSync(dir, sandbox.runAs.uid, sandbox.runAs.gid);
  }
  return realpathSync.native(dir);
}

/** A working directory inside the workspace: `relative` is what people and clients see ("." or "sub/dir"). */
export type TConfinedCwd = { ok: true; relative: string; absolute: string } | TCwdRefused;
/** A refused working directory: the sentence, and why with the path as written (for a reason code). */
type TCwdRefused = { ok: false; message: string; why: TCwdRefusal; cwd: string };
const refuse = (why: TCwdRefusal, cwd: string): TCwdRefused => ({ ok: false, message: cwdRefusalSentence(why, cwd), why, cwd });

const inside = (root: string, path: string): boolean => path === root || path.startsWith(root + sep);

/**
 * Resolves a requested working directory (relative to the workspace, or absolute) to its real
 * path, symlinks followed (by the system's realpath: one call, not a JavaScript lstat of each
 * part of the path), and accepts it only inside the workspace. Messages name the path as
 * the caller wrote it or relative to the workspace, never the server's absolute paths.
 */
export function confineCwd(workspaceDir: string, requested: string | null | undefined): TConfinedCwd {
  let root: string;
  try {
    root = realpathSync.native(workspaceDir);
  } catch {
    return refuse("noWorkspace", JSON.stringify(requested ?? "."));
  }
  const wanted = requested === null || requested === undefined || requested === "" ? "." : requested;
  if (wanted.includes("\0")) return refuse("nul", JSON.stringify(wanted));
  const lexical = isAbsolute(wanted) ? resolve(wanted) : resolve(root, wanted);
  const shown = JSON.stringify(wanted);
  let real: string;
  try {
    real = realpathSync.native(lexical);
  } catch {
    // Do not reveal whether an outside path exists: outside is refused the same either way.
    return inside(root, lexical) || inside(workspaceDir, lexical)
      ? refuse("missing", shown)
      : refuse("outside", shown);
  }
  if (!inside(root, real)) return refuse("outside", shown);
  if (!statSync(real).isDirectory()) return refuse("notDirectory", shown);
  return { ok: true, relative: relative(root, real) || ".", absolute: real };
}

/**
 * The working directory a tool call asks for, confined to the workspace and as the approval binds
 * it (workspace-relative), or the sentence refusing it; null for tools that run in no directory.
 */
export function confineToolCwd(tool: { cwdOf: (args: unknown) => string | null }, args: unknown, workspaceDir: string): { ok: true; cwd: string | null } | TCwdRefused {
  const requested = tool.cwdOf(args);
  if (requested === null) return { ok: true, cwd: null };
  const confined = confineCwd(workspaceDir, requested);
  return confined.ok ? { ok: true, cwd: confined.relative } : confined;
}
