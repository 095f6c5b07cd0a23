import { spawn } from "node:child_process";
import { expect } from "vitest";

export type TRun = { status: number | null; stdout: string; stderr: string };

/**
 * The CLI as `npm run cli -- …` runs it (`tsx server/cli/main.ts`, without npm's own start-up), on a data directory (and PostgreSQL when `databaseUrl`),
 * asynchronous so independent runs may overlap. `stdin` is written to the CLI's standard input.
 */
export function cli(dataDir: string, databaseUrl: string | undefined, args: readonly string[], options: { stdin?: string } = {}): Promise<TRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, COUNTERSIGN_DATA_DIR: dataDir };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "server/cli/main.ts", ...args], { env, timeout: 120_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

/** The JSON result of a run that succeeded (`--json`). */
export const json = (run: TRun): Record<string, unknown> => {
  expect(run.status, run.stderr + run.stdout).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
};

/** The `{"error":{"code","message"}}` of a run that failed with `--json`, and its exit code. */
export const jsonError = (run: TRun): { status: number | null; code: string; message: string; usage?: string } => {
  expect(run.status, run.stdout).not.toBe(0);
  const body = JSON.parse(run.stdout) as { error: { code: string; message: string; usage?: string } };
  return { status: run.status, ...body.error };
};
