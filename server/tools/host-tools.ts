import { z } from "zod";
import type { TRisk } from "../core/vocabulary";
import { runCommandForRun } from "./process-cleanup";
import { execEnvironment } from "./exec-sandbox";
import type { THostTool } from "./types";

const ZExecArgs = z.strictObject({
  command: z.string().min(1, "command must not be empty").max(16_384),
  cwd: z.string().min(1).max(4096).optional(),
  /** Any positive wait is accepted; a command runs at most MAX_EXEC_TIMEOUT_MS (10 min) and then reports `timedOut`. */
  timeoutMs: z.number().positive().optional(),
});

/** The longest one command runs: it holds a process, its run and the run's lease. */
export const MAX_EXEC_TIMEOUT_MS = 600_000;

const DESTRUCTIVE = /\b(rm\s+-[a-z]*[rf]|mkfs|dd\s+if=|shutdown|reboot|chmod\s+-R|chown\s+-R|>\s*\/dev\/sd|curl[^|]*\|\s*(ba)?sh|sudo)\b/i;

/** Runs a real shell command in the session workspace; needs approval by default. */
export const execTool: THostTool = {
  kind: "host",
  name: "exec",
  description: "Run a shell command in the session workspace.",
  argsSchema: ZExecArgs,
  action: "tool:exec",
  cwdOf: (args) => (args as z.infer<typeof ZExecArgs>).cwd ?? ".",
  describe: (args, cwd) => `Run \`${(args as z.infer<typeof ZExecArgs>).command}\` in ${cwd === null || cwd === "." ? "the workspace" : `./${cwd}`}?`,
  risk: (args): TRisk => (DESTRUCTIVE.test((args as z.infer<typeof ZExecArgs>).command) ? "high" : "medium"),
  execute: async (args, ctx) => {
    const { command, timeoutMs } = args as z.infer<typeof ZExecArgs>;
    // Spawned through the run's cleanup registry: refused once the run is revoked, whole marked tree stopped on cancel.
    const result = await runCommandForRun(ctx.responseId, {
      command,
      cwd: ctx.cwd ?? ctx.workspaceDir,
      timeoutMs: Math.min(Math.ceil(timeoutMs ?? 30_000), MAX_EXEC_TIMEOUT_MS),
      signal: ctx.signal,
      spawner: ctx.exec.sandbox.spawner,
      env: execEnvironment(ctx.workspaceDir, ctx.exec.env, ctx.exec.environment),
      confinement: { sandbox: ctx.exec.sandbox, workspaceDir: ctx.workspaceDir, network: ctx.exec.network },
    }, ctx.exec.processes);
    const out: Record<string, unknown> = { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    if (result.timedOut) out.timedOut = true;
    if (result.cancelled) out.cancelled = true;
    if (result.truncated) out.truncated = true;
    return out;
  },
};

const ZEchoArgs = z.strictObject({ text: z.string() });

/** Returns its argument; never needs approval. */
export const echoTool: THostTool = {
  kind: "host",
  name: "echo",
  description: "Echo text back.",
  argsSchema: ZEchoArgs,
  action: "tool:echo",
  cwdOf: () => null,
  describe: (args) => `Echo ${JSON.stringify((args as z.infer<typeof ZEchoArgs>).text)}?`,
  risk: () => "low",
  pure: true,
  execute: async (args) => ({ text: (args as z.infer<typeof ZEchoArgs>).text }),
};
