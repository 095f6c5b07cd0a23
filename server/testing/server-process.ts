import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** A free loopback port (the OS picks it; closed before returning). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * A server process. `child` is the server itself, or with `viaNpm` the `npm run serve` above it;
 * `kill` signals that child, or with `viaNpm` its whole process group (as a supervisor or Ctrl-C would).
 */
export type TServerProcess = { child: ChildProcess; url: string; output: () => string; kill: (signal?: NodeJS.Signals) => Promise<void> };

/**
 * Starts `server/main.ts` as a real process (API only) and waits until /v1/healthz answers.
 * `viaNpm`: through `npm run serve` (the script `npm start` ends in), as the leader of its own process group.
 */
export async function startServerProcess(options: { dataDir: string; port: number; databaseUrl?: string; env?: Record<string, string>; viaNpm?: boolean }): Promise<TServerProcess> {
  let output = "";
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  const [file, args] = options.viaNpm ? ["npm", ["run", "serve"]] : [process.execPath, ["--import", "tsx", "server/main.ts"]];
  const child = spawn(file, args, {
    detached: options.viaNpm === true,
    env: {
      ...env,
      COUNTERSIGN_DATA_DIR: options.dataDir,
      PORT: String(options.port),
      HOST: "127.0.0.1",
      COUNTERSIGN_PAGES: "off",
      COUNTERSIGN_LEASE_MS: "2000",
      LOG_LEVEL: "warn",
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${options.port}`;
  // Generous: a loaded CI machine may take over a minute to boot tsx + migrations.
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`);
    // Bounded: a request that lands while the server is still booting may never be answered.
    const ok = await fetch(`${url}/v1/healthz`, { signal: AbortSignal.timeout(2000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (options.viaNpm && child.pid !== undefined) process.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // Already gone.
    }
  };
  if (child.exitCode === null && !(await fetch(`${url}/v1/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok).catch(() => false))) {
    signal("SIGKILL");
    throw new Error(`server did not answer /v1/healthz in time:\n${output}`);
  }
  return {
    child,
    url,
    output: () => output,
    kill: async (sig = "SIGTERM") => {
      const running = child.exitCode === null && child.signalCode === null;
      // Through npm the group is signalled even once npm is gone: the server may outlive it.
      if (!running && !options.viaNpm) return;
      const exited = running ? new Promise((r) => child.once("exit", r)) : Promise.resolve();
      signal(sig);
      await exited;
    },
  };
}

/** Reads the demo operator's API key that the first start writes into the data directory. */
export async function demoApiKey(dataDir: string): Promise<string> {
  const file = join(dataDir, "demo-credentials.txt");
  // A failure bound, not a timing expectation: the server writes the file once on its first start.
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const key = existsSync(file) ? readFileSync(file, "utf8").match(/API key:\s+(\S+)/)?.[1] : undefined;
    if (key) return key;
  }
  throw new Error(`no API key in ${file} after 60 s`);
}

/** Starts `server/main.ts` with exactly `env` and waits for it to exit: for boots that must be refused. */
export async function bootUntilExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output };
}
