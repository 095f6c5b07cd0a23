import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectExecSandbox, execEnvironment, parseExecUser, type TSandboxChoice } from "../tools/exec-sandbox";
import { listMarkedProcesses, runCommand } from "../tools/run-command";
import { startSpawner, type TSpawner } from "../tools/spawner";
import { prepareWorkspace, secureDataDir } from "./workspace";

const isRoot = process.getuid?.() === 0;
const ownUid = process.getuid?.() ?? -1;
/** The oracle for detection: does bubblewrap create its namespaces here (and can it drop to the exec user as root)? */
const bwrapRuns =
  existsSync("/usr/bin/bwrap") &&
  (!isRoot || existsSync("/usr/bin/setpriv")) &&
  spawnSync("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--unshare-ipc", "--unshare-net", ...(isRoot ? [] : ["--unshare-user"]), "/bin/true"]).status === 0;
/**
 * Every mode this machine can run: bwrap (when it runs; one sandbox per session, the default, and
 * one per command), user (as root), and none; the others are refused at boot (see "detection").
 */
const modes: Array<[string, TSandboxChoice]> = [
  ...(bwrapRuns
    ? ([
        ["bwrap", detectExecSandbox("bwrap", undefined)],
        ["bwrap per command", detectExecSandbox("bwrap", undefined, undefined, { scope: "command", idleMs: 1 })],
      ] as Array<[string, TSandboxChoice]>)
    : []),
  ...(isRoot ? ([["user", detectExecSandbox("user", undefined)]] as Array<[string, TSandboxChoice]>) : []),
  ["none", detectExecSandbox("none", undefined)],
];

let spawner: TSpawner;
let dataDir: string;
let workspace: string;
let listener: Server;
let port = 0;

beforeAll(async () => {
  spawner = await startSpawner();
  dataDir = mkdtempSync(join(tmpdir(), "exec-sandbox-"));
  secureDataDir(dataDir);
  writeFileSync(join(dataDir, "auth-secret"), "the-auth-secret", { mode: 0o600 });
  mkdirSync(join(dataDir, "workspaces", "other"), { mode: 0o700 });
  writeFileSync(join(dataDir, "workspaces", "other", "theirs.txt"), "another session's file");
  listener = createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
});

afterAll(async () => {
  await spawner.stop();
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

const SECRET_ENV = { DATABASE_URL: "postgres://u:dbpass@h/db", BETTER_AUTH_SECRET: "sekrit", COUNTERSIGN_SECRET_KEY: "key", OPENAI_API_KEY: "sk-x", GIT_TOKEN: "named-one" };

describe.each(modes)("exec sandbox %s", (label, sandbox) => {
  const mode = sandbox.mode;
  const slug = label.replaceAll(" ", "-");
  const run = (command: string, network = false) => {
    workspace = prepareWorkspace(join(dataDir, "workspaces", `ws-${slug}`), sandbox);
    return runCommand({
      command,
      cwd: workspace,
      timeoutMs: 10_000,
      env: execEnvironment(workspace, ["GIT_TOKEN"], SECRET_ENV),
      spawner,
      confinement: { sandbox, workspaceDir: workspace, network },
    });
  };

  it("writes in the workspace, with HOME there and only the allowlisted environment", async () => {
    // In `user` mode the 0700 data directory above the workspace is closed to the exec user, so the
    // workspace is reached relatively (the command starts in it); bwrap recreates its parents.
    const r = await run(`echo hi > out.txt && cat ${mode === "user" ? "out.txt" : '"$HOME/out.txt"'} && env | sort`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(workspace, "out.txt"), "utf8")).toBe("hi\n");
    const names = r.stdout
      .split("\n")
      .slice(1)
      .filter(Boolean)
      .map((line) => line.split("=")[0]);
    expect(names).toEqual(expect.arrayContaining(["PATH", "HOME", "LANG", "TERM", "GIT_TOKEN", "COUNTERSIGN_PROCESS_MARKER"]));
    for (const leaked of ["DATABASE_URL", "BETTER_AUTH_SECRET", "COUNTERSIGN_SECRET_KEY", "OPENAI_API_KEY"]) expect(names).not.toContain(leaked);
    expect(r.stdout).not.toMatch(/dbpass|sekrit|sk-x/);
  });

  if (mode === "none") {
    it("can read what the server's user can read (the documented cost of mode none)", async () => {
      const r = await run(`cat ${dataDir}/auth-secret; cat ${dataDir}/workspaces/other/theirs.txt; echo done`);
      expect(r.stdout).toBe("the-auth-secretanother session's filedone\n");
    });
  } else {
    it("cannot read the data directory, another session's workspace or the server's environment", async () => {
      const r = await run(`cat ${dataDir}/auth-secret; ls ${dataDir}; cat ${dataDir}/workspaces/other/theirs.txt; cat ../other/theirs.txt; cat /proc/${process.pid}/environ; echo done`);
      expect(r.stdout).not.toContain("the-auth-secret");
      expect(r.stdout).not.toContain("another session's file");
      expect(r.stdout).not.toContain("auth-secret");
      expect(r.stdout).not.toMatch(/DATABASE_URL|BETTER_AUTH/);
      expect(r.stdout.trim().endsWith("done")).toBe(true);
    });
  }

  it(`runs as ${sandbox.runAs ? `the exec user (uid ${sandbox.runAs.uid})` : "the server's user"}`, async () => {
    const r = await run("id -u; cat /etc/shadow > /dev/null 2>&1 && echo shadow-readable || echo shadow-refused");
    const uid = sandbox.runAs?.uid ?? ownUid;
    expect(r.stdout).toBe(`${uid}\n${uid === 0 ? "shadow-readable" : "shadow-refused"}\n`);
  });

  it("leaves no process behind when the command exits with processes in the background", async () => {
    // bwrap: the spawner skips the reap scan once the command's PID namespace has ended (even a process
    // that left the group with setsid is gone then); the others' process group is reaped by the scan
    // (setsid escapes it). Each command is checked the moment it is reported, in rounds of eight at
    // once: that load once let a background process outlive its namespace for a moment (1 in 30).
    const escaped = mode === "bwrap" ? "setsid sleep 30 >/dev/null 2>&1 & " : "";
    workspace = prepareWorkspace(join(dataDir, "workspaces", `ws-${slug}`), sandbox);
    const leftovers: number[] = [];
    for (let round = 0; round < 8; round++) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const marker = `bg-${slug}-${process.pid}-${round}-${i}`;
          const r = await runCommand({
            command: `sleep 30 >/dev/null 2>&1 & ${escaped}echo ok`,
            cwd: workspace,
            timeoutMs: 10_000,
            env: execEnvironment(workspace),
            marker,
            spawner,
            confinement: { sandbox, workspaceDir: workspace, network: false },
          });
          leftovers.push(...listMarkedProcesses(marker));
          expect(r.stdout).toBe("ok\n");
          expect(r.exitCode).toBe(0);
          // Only a PID namespace that ended with the command lets the caller skip its own marker scan.
          expect(r.treeEnded).toBe(mode === "bwrap");
        }),
      );
    }
    expect(leftovers).toEqual([]);
  });

  if (mode === "bwrap") {
    it("a command stopped by its timeout is not reported as ended with its namespace (the caller still scans)", async () => {
      workspace = prepareWorkspace(join(dataDir, "workspaces", `ws-${slug}`), sandbox);
      const r = await runCommand({
        command: "sleep 30",
        cwd: workspace,
        timeoutMs: 300,
        env: execEnvironment(workspace),
        spawner,
        confinement: { sandbox, workspaceDir: workspace, network: false },
      });
      expect(r.timedOut).toBe(true);
      expect(r.treeEnded).toBe(false);
    });

    it("has no network unless the agent allows it", async () => {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo unreachable`;
      expect((await run(probe)).stdout).toContain("unreachable");
      expect((await run(probe, true)).stdout).toContain("hello");
    });

    it("sees only its own processes and a private /tmp", async () => {
      writeFileSync(join(tmpdir(), `host-only-${slug}.txt`), "host tmp");
      const r = await run(`ls /proc | grep -c '^[0-9]'; ls /tmp; test -e ${tmpdir()}/host-only-${slug}.txt && echo host-tmp-visible || echo host-tmp-hidden`);
      expect(Number(r.stdout.split("\n")[0])).toBeLessThan(10);
      expect(r.stdout).toContain("host-tmp-hidden");
    });
  } else {
    it("keeps the host's network whatever the agent allows (only bubblewrap can take it away)", async () => {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo unreachable`;
      expect((await run(probe, false)).stdout).toBe("hello\n");
      expect((await run(probe, true)).stdout).toBe("hello\n");
    });

    it("shares the host's processes and /tmp (no namespaces)", async () => {
      writeFileSync(join(tmpdir(), `host-only-${mode}.txt`), "host tmp");
      const r = await run(`test -d /proc/${process.pid} && echo server-visible; test -e ${tmpdir()}/host-only-${mode}.txt && echo host-tmp-visible`);
      expect(r.stdout).toBe("server-visible\nhost-tmp-visible\n");
    });
  }
});

/**
 * Host processes whose command line holds every one of `parts` (bubblewrap's names the workspace it
 * binds), without those whose parent matches too (bubblewrap's namespace init is a fork of it).
 */
function hostProcesses(...parts: string[]): number[] {
  const found = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0");
      if (!parts.every((part) => argv.includes(part))) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      found.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

/** Polls `test` every 20 ms until it holds; fails after 30 s (a bound far beyond the idle time tested). */
async function eventually(test: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!bwrapRuns)("one bubblewrap sandbox per session", () => {
  const sandbox = bwrapRuns ? detectExecSandbox("bwrap", undefined) : detectExecSandbox("none", undefined);
  const run = (ws: string, command: string, options: { network?: boolean; timeoutMs?: number; choice?: TSandboxChoice; maxOutputBytes?: number } = {}) =>
    runCommand({
      command,
      cwd: ws,
      timeoutMs: options.timeoutMs ?? 10_000,
      ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
      env: execEnvironment(ws),
      spawner,
      confinement: { sandbox: options.choice ?? sandbox, workspaceDir: ws, network: options.network ?? false },
    });
  const session = (name: string, choice: TSandboxChoice = sandbox) => prepareWorkspace(join(dataDir, "workspaces", `session-${name}`), choice);

  it("a session's one command runs in a sandbox of its own and leaves none behind", async () => {
    const once = session("once");
    expect((await run(once, "echo alone")).stdout).toBe("alone\n");
    expect(hostProcesses("/usr/bin/bwrap", once)).toEqual([]);
  });

  it("from a session's second command on, its commands share its sandbox's /tmp; another session's, or the other network setting's, do not", async () => {
    const a = session("share-a");
    const b = session("share-b");
    await run(a, "true");
    expect((await run(a, "echo from-a > /tmp/note && echo written")).stdout).toBe("written\n");
    expect((await run(a, "cat /tmp/note")).stdout).toBe("from-a\n");
    await run(b, "true");
    expect((await run(b, "cat /tmp/note 2>/dev/null || echo absent")).stdout).toBe("absent\n");
    await run(a, "true", { network: true });
    expect((await run(a, "cat /tmp/note 2>/dev/null || echo absent", { network: true })).stdout).toBe("absent\n");
    // One bubblewrap per session workspace and network setting, however many commands ran.
    expect(hostProcesses("/usr/bin/bwrap", a)).toHaveLength(2);
    expect(hostProcesses("/usr/bin/bwrap", b)).toHaveLength(1);
  });

  it("a command in the session's sandbox keeps its exit code, its two streams apart and the output bound", async () => {
    const a = session("streams");
    await run(a, "true");
    const r = await run(a, "echo out; echo err >&2; head -c 200000 /dev/zero | tr '\\0' a; exit 7", { maxOutputBytes: 1000 });
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toBe("err\n");
    expect(r.stdout).toHaveLength(1000);
    expect(r.stdout.startsWith("out\naaa")).toBe(true);
    expect(r.truncated).toBe(true);
    expect(hostProcesses("/usr/bin/bwrap", a)).toHaveLength(1);
  });

  it("a command's timeout ends its own tree and leaves the session's sandbox", async () => {
    const a = session("timeout");
    await run(a, "true");
    await run(a, "echo kept > /tmp/note");
    // A background job in its group, and a daemon that left the group and cleared its environment (marker).
    const r = await run(a, "setsid env -i /bin/sleep 301 >/dev/null 2>&1 < /dev/null & sleep 30 & echo $! > /tmp/background; sleep 30", { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    const after = await run(a, `cat /tmp/note; kill -0 "$(cat /tmp/background)" 2>/dev/null && echo background-alive || echo background-gone; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done`);
    expect(after.stdout.startsWith("kept\nbackground-gone\n")).toBe(true);
    expect(after.stdout).not.toContain("sleep 301");
  });

  it("a process that cleared its environment and left its group is ended once no other command of the session runs", async () => {
    const a = session("daemon");
    await run(a, "true");
    const r = await run(a, "setsid env -i /bin/sleep 300 >/dev/null 2>&1 < /dev/null & echo started");
    expect(r.stdout).toBe("started\n");
    expect(r.treeEnded).toBe(true);
    const seen = await run(a, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done");
    expect(seen.stdout).not.toContain("sleep 300");
  });

  it("a command that kills everything it can see ends only its own session's sandbox; the next command gets a fresh one", async () => {
    const a = session("killer");
    const b = session("bystander");
    for (const ws of [a, b]) await run(ws, "true");
    await run(a, "echo mine > /tmp/note");
    await run(b, "echo theirs > /tmp/note");
    const r = await run(a, "kill -9 -1; sleep 5");
    expect(r.exitCode).toBeNull();
    expect(r.treeEnded).toBe(false);
    expect((await run(a, "cat /tmp/note 2>/dev/null || echo fresh")).stdout).toBe("fresh\n");
    expect((await run(b, "cat /tmp/note")).stdout).toBe("theirs\n");
  });

  it("a sandbox without a command for its idle time ends; the session's next command starts a new one", async () => {
    const quick = detectExecSandbox("bwrap", undefined, undefined, { scope: "session", idleMs: 1000 });
    const a = session("idle", quick);
    // Two commands at once: the first runs in a sandbox of its own, the second starts the session's;
    // both wait for a file the test writes, so the session's sandbox is busy (never idle) meanwhile.
    const hold = "until [ -e release ]; do sleep 0.02; done; echo released";
    const holders = [run(a, hold, { choice: quick }), run(a, hold, { choice: quick })];
    await eventually(() => hostProcesses("/usr/bin/bwrap", a).length === 2, "both started");
    expect((await run(a, "echo before > /tmp/note && cat /tmp/note", { choice: quick })).stdout).toBe("before\n");
    expect((await run(a, "cat /tmp/note", { choice: quick })).stdout).toBe("before\n");
    writeFileSync(join(a, "release"), "");
    for (const held of await Promise.all(holders)) expect(held.stdout).toBe("released\n");
    await eventually(() => hostProcesses("/usr/bin/bwrap", a).length === 0, "ended");
    expect((await run(a, "cat /tmp/note 2>/dev/null || echo fresh", { choice: quick })).stdout).toBe("fresh\n");
  });
});

describe("detection", () => {
  it("auto picks bubblewrap when it runs, else the exec user as root, else none", () => {
    const auto = detectExecSandbox("auto", undefined);
    expect(auto.mode).toBe(bwrapRuns ? "bwrap" : isRoot ? "user" : "none");
    expect(auto.runAs).toEqual(isRoot ? { uid: 65534, gid: 65534 } : null);
  });

  it("an explicit bwrap is chosen when it runs, and is a boot error otherwise", () => {
    if (bwrapRuns) expect(detectExecSandbox("bwrap", "1000:1000")).toMatchObject({ mode: "bwrap", runAs: isRoot ? { uid: 1000, gid: 1000 } : null });
    else expect(() => detectExecSandbox("bwrap", undefined)).toThrow(/COUNTERSIGN_EXEC_SANDBOX=bwrap, but bubblewrap does not work here/);
  });

  it("an explicit user is chosen as root, and is a boot error otherwise", () => {
    if (isRoot) expect(detectExecSandbox("user", "1000:1000")).toMatchObject({ mode: "user", runAs: { uid: 1000, gid: 1000 } });
    else expect(() => detectExecSandbox("user", undefined)).toThrow("COUNTERSIGN_EXEC_SANDBOX=user needs the server to run as root (to switch to the exec user).");
  });

  it("without bubblewrap, the boot line names the weaker mode and the command that installs bubblewrap", () => {
    const missing = detectExecSandbox("auto", undefined, () => "missing");
    expect(missing.mode).toBe(isRoot ? "user" : "none");
    expect(missing.reason).toMatch(isRoot ? /^weaker than bubblewrap: commands run as uid 65534/ : /^unconfined: /);
    expect(missing.reason).toContain("`sudo apt-get install -y bubblewrap` (Debian/Ubuntu)");
    // Installed but refused its namespaces: installing it again would not help.
    const fails = detectExecSandbox("auto", undefined, () => "fails");
    expect(fails.mode).toBe(missing.mode);
    expect(fails.reason).toMatch(/bubblewrap is installed but cannot create its namespaces here/);
    expect(fails.reason).not.toContain("apt-get");
    expect(detectExecSandbox("auto", undefined, () => "works").mode).toBe("bwrap");
    // An explicit weaker mode was chosen on purpose: no advice.
    if (isRoot) expect(detectExecSandbox("user", undefined, () => "missing").reason).not.toContain("apt-get");
    expect(() => detectExecSandbox("bwrap", undefined, () => "missing")).toThrow("sudo apt-get install -y bubblewrap");
  });

  it("none is always available and runs commands as the server's user", () => {
    expect(detectExecSandbox(" NONE ", "1000:1000")).toMatchObject({ mode: "none", runAs: null });
  });
});

describe("data directory and workspace permissions", () => {
  it("the data directory and its workspaces root are 0700; a workspace belongs to the exec user", () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, "workspaces")).mode & 0o777).toBe(0o700);
    chmodSync(dataDir, 0o755);
    secureDataDir(dataDir);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const sandbox = isRoot ? detectExecSandbox("user", undefined) : detectExecSandbox("none", undefined);
    const ws = prepareWorkspace(join(dataDir, "workspaces", "owned"), sandbox);
    expect(ws).toBe(realpathSync(ws));
    expect(statSync(ws).mode & 0o777).toBe(0o700);
    expect(statSync(ws).uid).toBe(isRoot ? 65534 : process.getuid?.());
  });
});

describe("configuration", () => {
  it("rejects unknown modes, root as the exec user and malformed users", () => {
    expect(() => detectExecSandbox("docker", undefined)).toThrow(/COUNTERSIGN_EXEC_SANDBOX "docker": use auto, bwrap, user or none/);
    expect(() => parseExecUser("0:0")).toThrow(/must not run as root/);
    expect(() => parseExecUser("nobody")).toThrow(/use <uid>:<gid>/);
    expect(parseExecUser("1000:1000")).toEqual({ uid: 1000, gid: 1000 });
    expect(parseExecUser(undefined)).toEqual({ uid: 65534, gid: 65534 });
  });
});
