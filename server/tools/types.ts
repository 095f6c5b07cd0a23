import type { z } from "zod";
import type { Db } from "../../db/client";
import type { TQuestion } from "../core/questions/schema";
import type { TRisk } from "../core/vocabulary";
import type { TSecretSealer } from "../ports/secrets";
import type { TExecSandbox } from "./exec-sandbox";
import type { ProcessCleanup } from "./process-cleanup";

/** What a host tool may use while it runs. */
export type THostToolContext = {
  workspaceDir: string;
  signal: AbortSignal;
  userId: string;
  sessionId: string;
  responseId: string;
  /** The sandbox commands run in, with the agent's own allowances (network, named variables). */
  /** Where and how commands run; `processes` is this server's registry of the command trees runs started. */
  exec: { sandbox: TExecSandbox; network: boolean; env: readonly string[]; processes: ProcessCleanup; environment?: Readonly<Record<string, string | undefined>> };
};

/** A tool the host runs itself (exec, echo, ...). */
export type THostTool = {
  kind: "host";
  name: string;
  description: string;
  argsSchema: z.ZodType;
  /** The action name an approval shows and binds to, e.g. `tool:exec`. */
  action: string;
  /**
   * The working directory the operation asks for, as the agent wrote it (relative to the session
   * workspace, or absolute; "." for the workspace itself); null when the tool runs in no directory.
   * The host confines it to the workspace before anyone is asked, and binds the approval to it.
   */
  cwdOf: (args: unknown) => string | null;
  /** The sentence an approver reads; `cwd` is workspace-relative ("." or "sub/dir"). */
  describe: (args: unknown, cwd: string | null) => string;
  risk: (args: unknown) => TRisk;
  /**
   * No side effect (it only computes its result): it may run again after a crash, so the host
   * commits no "running" marker before it. Anything that touches the world leaves this unset.
   */
  pure?: boolean;
  /** `cwd` is the confined real path, re-checked right before the call; null when the tool has none. */
  execute: (args: unknown, ctx: THostToolContext & { cwd: string | null }) => Promise<unknown>;
};

/** A tool only the connected client runs; private ones hand their input to `handlePrivateInput` only. */
export type TClientTool = {
  kind: "client";
  name: string;
  description: string;
  argsSchema: z.ZodType;
  /** Validates what the client submits (the output, or the private input). */
  outputSchema: z.ZodType;
  /** JSON Schema sent to the client as `inputSchema` for private input. */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * The application handler for private input: the only code that sees it. It runs inside the
   * submission's transaction and returns the public response the model receives.
   */
  handlePrivateInput?: (input: unknown, ctx: { tx: Db; userId: string; sessionId: string; secrets: TSecretSealer }) => Promise<unknown>;
};

/** A tool that asks a person through a Gateway question and suspends the run until it settles. */
export type TQuestionTool = {
  kind: "question";
  name: string;
  description: string;
  argsSchema: z.ZodType;
  questionKind: "ask_user" | "secret" | "structured" | "url";
  /** The questions to ask, or an immediate result when the request cannot be shown (e.g. unsupported). */
  compile: (args: unknown) => { ok: true; questions: TQuestion[]; timeoutMs: number } | { ok: false; result: unknown };
  /** What the agent sees once the question settles (from the generic settled result). */
  present: (args: unknown, questions: TQuestion[], settled: TSettledQuestion) => unknown;
};

/** The generic result a settled question leaves: answered (secrets "stored"), cancelled or expired. */
export type TSettledQuestion =
  | { status: "answered"; answers: Record<string, string[]>; secretIds?: Record<string, string> }
  | { status: "cancelled"; by?: string; system?: boolean }
  | { status: "expired"; message: string };

/** A tool that runs a named node command on a paired device (`node_invoke`, server/devices/node-invoke-tool.ts; run by server/devices/run-device-tool.ts). */
export type TDeviceTool = {
  kind: "device";
  name: string;
  description: string;
  argsSchema: z.ZodType;
};

export type TTool = THostTool | TClientTool | TQuestionTool | TDeviceTool;
