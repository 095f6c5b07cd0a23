import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TSessionSandboxPlan, TSpawner } from "./spawner";

/**
 * How approved commands are confined (`COUNTERSIGN_EXEC_SANDBOX`):
 * - `bwrap`: bubblewrap: a private mount namespace holding only the read-only system, the session
 *   workspace (writable) and a private /tmp; own PID, IPC and UTS namespaces; no network unless the
 *   agent allows it. As root the command also drops to the unprivileged exec user inside.
 * - `user`: no namespaces, but the command runs as the unprivileged exec user (root servers only);
 *   the data directory (0700, owned by the server) is out of its reach.
 * - `none`: the command runs as the server's own user with only the minimal environment and the
 *   workspace check; it could read what that user can read. Chosen only when nothing else works
 *   (or explicitly), and boot says so loudly.
 */
export const EXEC_SANDBOX_MODES = ["bwrap", "user", "none"] as const;
export type TExecSandboxMode = (typeof EXEC_SANDBOX_MODES)[number];

/**
 * How long one bubblewrap sandbox lives (`COUNTERSIGN_EXEC_SANDBOX_SCOPE`):
 * - `session` (default): one sandbox per session workspace (and network setting), created by the
 *   session's second command within `idleMs` (its first runs in a sandbox of its own) and ended once
 *   no command of the session has run for `idleMs` (`COUNTERSIGN_EXEC_SANDBOX_IDLE_MS`, default
 *   30 s); its agent forks each command inside it. The session's commands share its private /tmp
 *   and PID namespace while it lives; commands of different sessions never share one.
 * - `command`: a fresh sandbox per command (namespaces created and torn down every time: about three
 *   times the machine's CPU of an unconfined command).
 */
export const SANDBOX_SCOPES = ["session", "command"] as const;
export type TSandboxScope = (typeof SANDBOX_SCOPES)[number];
export type TSandboxReuse = { scope: TSandboxScope; idleMs: number };
const DEFAULT_REUSE: TSandboxReuse = { scope: "session", idleMs: 30_000 };

/** Parses `COUNTERSIGN_EXEC_SANDBOX_SCOPE` and `COUNTERSIGN_EXEC_SANDBOX_IDLE_MS`. */
export function parseSandboxReuse(scope: string | undefined, idleMs: string | undefined): TSandboxReuse {
  const wanted = (scope ?? "").trim().toLowerCase() || DEFAULT_REUSE.scope;
  if (!(SANDBOX_SCOPES as readonly string[]).includes(wanted)) throw new Error(`Invalid COUNTERSIGN_EXEC_SANDBOX_SCOPE "${scope}": use session or command.`);
  let idle = DEFAULT_REUSE.idleMs;
  if (idleMs !== undefined && idleMs.trim() !== "") {
    idle = Number(idleMs);
    if (!Number.isInteger(idle) || idle < 1 || idle > 3_600_000) throw new Error(`COUNTERSIGN_EXEC_SANDBOX_IDLE_MS must be a whole number of milliseconds from 1 to 3600000, not "${idleMs}".`);
  }
  return { scope: wanted as TSandboxScope, idleMs: idle };
}

/** The sandbox mode this process runs approved commands in; detected once at boot. */
export type TSandboxChoice = {
  mode: TExecSandboxMode;
  /** bwrap only: one sandbox per session or per command. */
  reuse: TSandboxReuse;
  /** The unprivileged user commands run as (`bwrap` and `user` when the server is root); null: the server's own user. */
  runAs: { uid: number; gid: number } | null;
  /** Why this mode: a sentence for the boot log. */
  reason: string;
};

/**
 * Where approved commands run: the detected sandbox, and the spawner process that forks every
 * command under it (server/tools/spawner.ts; started with the server, stopped with it).
 */
export type TExecSandbox = TSandboxChoice & { spawner: TSpawner };

/** What one confined command may see and do. */
export type TConfinement = {
  sandbox: TSandboxChoice;
  /** The session workspace (absolute, real path): the only writable place. */
  workspaceDir: string;
  /** Whether the command may use the network (bwrap only; `user` and `none` cannot take it away). */
  network: boolean;
};

/**
 * How to spawn a command under a confinement: the executable, its arguments and the spawn options.
 * `pidNamespace`: bubblewrap in its own PID namespace, writing its info (the init's pid) to fd 3.
 * `sandbox`: the command (file, args, cwd) runs inside the session's long-lived sandbox instead.
 */
export type TSpawnPlan = { file: string; args: string[]; cwd: string; uid?: number; gid?: number; pidNamespace?: boolean; sandbox?: TSessionSandboxPlan };

const BWRAP = "/usr/bin/bwrap";
/** The sandbox's agent: the spawner's own script, run inside with `--in-sandbox`, and the module it imports. */
const AGENT_SCRIPT = fileURLToPath(new URL("./spawner-process.mjs", import.meta.url));
const AGENT_FILES = [AGENT_SCRIPT, fileURLToPath(new URL("./proc.mjs", import.meta.url))];
const SETPRIV = "/usr/bin/setpriv";
const NOBODY = { uid: 65534, gid: 65534 };

/** Read-only system paths mounted into the bubblewrap sandbox (when present); the rest of the host is absent. */
const SYSTEM_PATHS = ["/usr", "/etc", "/opt"];
/** Merged-/usr symlinks, recreated inside so /bin/bash etc. resolve. */
const USR_LINKS: ReadonlyArray<[string, string]> = [
  ["usr/bin", "/bin"],
  ["usr/sbin", "/sbin"],
  ["usr/lib", "/lib"],
  ["usr/lib64", "/lib64"],
];
let hostUsrLinks: ReadonlyArray<[string, string]> | null = null;
/** The merged-/usr symlinks this host has: looked up on the first command, not on every one (the system's layout does not change under a running server). */
const usrLinks = (): ReadonlyArray<[string, string]> => (hostUsrLinks ??= USR_LINKS.filter(([, link]) => existsSync(link)));

const isRoot = (): boolean => typeof process.getuid === "function" && process.getuid() === 0;

/** Parses `COUNTERSIGN_EXEC_USER` (`uid:gid`, default 65534:65534 = nobody). */
export function parseExecUser(value: string | undefined): { uid: number; gid: number } {
  if (value === undefined || value.trim() === "") return NOBODY;
  const match = value.trim().match(/^(\d+):(\d+)$/);
  if (!match) throw new Error(`Invalid COUNTERSIGN_EXEC_USER "${value}": use <uid>:<gid>, e.g. 65534:65534.`);
  const uid = Number(match[1]);
  const gid = Number(match[2]);
  if (uid === 0 || gid === 0) throw new Error("Invalid COUNTERSIGN_EXEC_USER: commands must not run as root (uid or gid 0).");
  return { uid, gid };
}

/** Whether bubblewrap runs here: `works`, `missing` (not installed) or `fails` (installed, but the kernel or the container refuses its namespaces). */
export type TBwrapStatus = "works" | "missing" | "fails";

/** The command that installs bubblewrap, as boot prints it. */
export const INSTALL_BWRAP = "sudo apt-get install -y bubblewrap";

/**
 * Does bubblewrap run here (installed, and namespaces allowed by the kernel and the container)?
 * The probe runs `/bin/true` as the namespace's PID 1 (`--as-pid-1`), so bubblewrap itself reaps
 * it: without it the namespace's init outlives bubblewrap for a moment and becomes a zombie of a PID 1
 * that does not reap (node as a container's PID 1).
 */
function bwrapStatus(runAs: { uid: number; gid: number } | null): TBwrapStatus {
  if (!existsSync(BWRAP)) return "missing";
  if (runAs && !existsSync(SETPRIV)) return "fails";
  const probe = bwrapArgs({ sandbox: { mode: "bwrap", runAs, reuse: DEFAULT_REUSE, reason: "" }, workspaceDir: "/", network: false }, "/", ["/bin/true"]);
  const result = spawnSync(BWRAP, ["--as-pid-1", ...probe], { stdio: "ignore", timeout: 10_000 });
  return result.status === 0 ? "works" : "fails";
}

/** What to do about a bubblewrap that does not run here (the end of the boot line). */
function bwrapAdvice(status: TBwrapStatus): string {
  return status === "missing"
    ? `bubblewrap is not installed; for the full sandbox run \`${INSTALL_BWRAP}\` (Debian/Ubuntu) and restart`
    : "bubblewrap is installed but cannot create its namespaces here; allow unprivileged user namespaces (docs/deployment.md) and restart";
}

/**
 * Picks the sandbox: `auto` (default) takes bubblewrap when it works, else the unprivileged user
 * when the server is root, else `none`. An explicit mode that cannot work is a boot error.
 * `probe` tells whether bubblewrap runs here (tests pass their own).
 */
export function detectExecSandbox(
  requested: string | undefined,
  execUser: string | undefined,
  probe: (runAs: { uid: number; gid: number } | null) => TBwrapStatus = bwrapStatus,
  reuse: TSandboxReuse = DEFAULT_REUSE,
): TSandboxChoice {
  const wanted = (requested ?? "auto").trim().toLowerCase() || "auto";
  if (wanted !== "auto" && !(EXEC_SANDBOX_MODES as readonly string[]).includes(wanted)) {
    throw new Error(`Invalid COUNTERSIGN_EXEC_SANDBOX "${requested}": use auto, bwrap, user or none.`);
  }
  const runAs = isRoot() ? parseExecUser(execUser) : null;
  if (wanted === "none") return { mode: "none", runAs: null, reuse, reason: "COUNTERSIGN_EXEC_SANDBOX=none: commands run as the server's user with its file access" };
  let status: TBwrapStatus | null = null;
  if (wanted === "bwrap" || wanted === "auto") {
    status = probe(runAs);
    if (status === "works") {
      const who = runAs ? `commands run as uid ${runAs.uid}` : "commands run as the server's user in a user namespace";
      const scope = reuse.scope === "session" ? `one sandbox per session, ended after ${reuse.idleMs / 1000} s without a command` : "one sandbox per command";
      return { mode: "bwrap", runAs, reuse, reason: `bubblewrap, ${who}, ${scope}` };
    }
    if (wanted === "bwrap") throw new Error(`COUNTERSIGN_EXEC_SANDBOX=bwrap, but bubblewrap does not work here (install it with ${INSTALL_BWRAP}, and allow user namespaces).`);
  }
  const advice = status === null ? "" : `; ${bwrapAdvice(status)}`;
  if (runAs) return { mode: "user", runAs, reuse, reason: `weaker than bubblewrap: commands run as uid ${runAs.uid} without namespaces (no network isolation)${advice}` };
  if (wanted === "user") throw new Error("COUNTERSIGN_EXEC_SANDBOX=user needs the server to run as root (to switch to the exec user).");
  return { mode: "none", runAs: null, reuse, reason: `unconfined: commands run as the server's user and could read its data directory${advice}` };
}

/** `/a/b/c` → `/a`, `/a/b` (not the root, not the path itself). */
function ancestorsOf(path: string): string[] {
  const parts = path.split("/").filter(Boolean);
  return parts.slice(0, -1).map((_, i) => `/${parts.slice(0, i + 1).join("/")}`);
}

/** The bubblewrap command line (without the executable) for `command` run in `cwd`, with `readOnly` files bound at their own paths too. */
function bwrapArgs(confinement: TConfinement, cwd: string, command: string[], readOnly: readonly string[] = []): string[] {
  const { sandbox, workspaceDir, network } = confinement;
  const args: string[] = ["--die-with-parent", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"];
  // As root bwrap sets up the namespaces itself and setpriv drops to the exec user; otherwise a user namespace does.
  if (!sandbox.runAs) args.push("--unshare-user");
  if (!network) args.push("--unshare-net");
  for (const path of SYSTEM_PATHS) args.push("--ro-bind-try", path, path);
  for (const [target, link] of usrLinks()) args.push("--symlink", target, link);
  // /tmp is the sandbox's own, writable by the exec user (sticky, as on any system).
  args.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp");
  if (workspaceDir !== "/") {
    // The workspace keeps its real path; its parents are recreated empty and traversable (absolute
    // paths such as $HOME work), so nothing else of the data directory exists inside.
    for (const parent of ancestorsOf(workspaceDir)) args.push("--perms", "0755", "--dir", parent);
    args.push("--bind", workspaceDir, workspaceDir);
  }
  // Read-only files (the sandbox agent's) keep their paths; their parents are created traversable, as the workspace's are.
  const made = new Set(ancestorsOf(workspaceDir));
  for (const file of readOnly) {
    if (SYSTEM_PATHS.some((path) => file.startsWith(`${path}/`))) continue;
    for (const parent of ancestorsOf(file)) {
      if (made.has(parent)) continue;
      made.add(parent);
      args.push("--perms", "0755", "--dir", parent);
    }
    args.push("--ro-bind", file, file);
  }
  args.push("--chdir", cwd);
  if (sandbox.runAs) {
    const { uid, gid } = sandbox.runAs;
    args.push(SETPRIV, `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs");
  }
  return [...args, ...command];
}

/**
 * How to start `/bin/bash -c command` in `cwd` under the confinement. The environment is passed
 * to spawn as given (callers build it from an allowlist, see `execEnvironment`).
 */
export function spawnPlan(confinement: TConfinement, command: string, cwd: string): TSpawnPlan {
  const shell = ["/bin/bash", "-c", command];
  const { sandbox, workspaceDir, network } = confinement;
  // bwrapArgs always unshares the PID namespace: the spawner needs no reap scan after a normal exit.
  // --info-fd 3: bubblewrap tells the spawner its namespace init's pid, whose end the spawner awaits.
  if (sandbox.mode === "bwrap") {
    const own: TSpawnPlan = { file: BWRAP, args: ["--info-fd", "3", ...bwrapArgs(confinement, cwd, shell)], cwd: workspaceDir, pidNamespace: true };
    if (sandbox.reuse.scope === "command") return own;
    // The session's sandbox: its agent (node running the spawner's script) is its only long-lived
    // process; it runs as a command would (setpriv's exec user, no capabilities) and forks each
    // command as is. The spawner starts it for a session's second command within the idle time
    // (the first runs in a sandbox of its own, so one-command sessions pay nothing more).
    const agent = [process.execPath, AGENT_SCRIPT, "--in-sandbox"];
    const start = bwrapArgs(confinement, workspaceDir, agent, [process.execPath, ...AGENT_FILES]);
    const key = `${workspaceDir}\0${network ? "network" : "no-network"}`;
    return { ...own, sandbox: { key, file: BWRAP, args: start, cwd: workspaceDir, idleMs: sandbox.reuse.idleMs, command: { file: shell[0] as string, args: shell.slice(1), cwd } } };
  }
  // Node changes directory before it drops to the exec user, so the command starts inside a workspace
  // whose parents (the 0700 data directory) it could not traverse itself.
  if (sandbox.mode === "user" && sandbox.runAs) return { file: shell[0] as string, args: shell.slice(1), cwd, uid: sandbox.runAs.uid, gid: sandbox.runAs.gid };
  return { file: shell[0] as string, args: shell.slice(1), cwd };
}

/** Variables every command gets; nothing else of the server's environment reaches it. */
const BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The whole environment of an approved command: `PATH`, `HOME` (the workspace), `LANG`, `TERM`,
 * plus the variables the agent's configuration names explicitly (`exec.env`), read from `from`,
 * the server's environment. None of the server's own secrets (database URL, auth secret, secret key,
 * model keys) reach it unless an agent names them.
 */
export function execEnvironment(workspaceDir: string, named: readonly string[] = [], from: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: BASE_PATH, HOME: workspaceDir, LANG: "C.UTF-8", TERM: "dumb" };
  for (const name of named) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
