import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect } from "vitest";
import type { TMcpServerConfig } from "../../server/mcp/config";
import type { TTestApp } from "../../server/testing/test-app";
import { readSse, type TBody, type TWireFrame } from "./helpers";

export const REPO = resolve(import.meta.dirname, "../..");
export const FIXTURE = join(REPO, "tests/fixtures/mcp-server.ts");

/** A stdio config that starts the fixture MCP server (a real process) with its call log. */
export const stdioFixture = (name: string, logFile: string, extra: Partial<TMcpServerConfig> = {}): TMcpServerConfig =>
  ({ name, transport: "stdio", command: process.execPath, args: ["--import", "tsx", FIXTURE, "--log", logFile], cwd: REPO, ...extra }) as TMcpServerConfig;

/** Starts the fixture as a Streamable HTTP server on a loopback port. */
export async function startHttpFixture(logFile: string, port = 0): Promise<{ url: string; port: number; process: ChildProcess; stop: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, "--log", logFile, "--http", "--port", String(port)], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  const bound = await new Promise<number>((resolvePort, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the HTTP fixture did not start: ${out}`)), 20_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${bound}/mcp`, port: bound, process: child, stop: () => child.kill("SIGKILL") };
}

/** The fixture's call log: one JSON object per tool call or elicitation result. */
export type TFixtureLog = { pid: number; transport: string; tool?: string; event?: string; args?: Record<string, unknown>; elicitation?: Record<string, unknown>; elicitationError?: string };

export const fixtureLog = (file: string): TFixtureLog[] =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as TFixtureLog)
    : [];

/** Log entries of one tool's calls (not its elicitation results). */
export const callsOf = (file: string, tool: string) => fixtureLog(file).filter((e) => e.tool === tool && e.args !== undefined);

/** Starts a streaming response; returns the SSE reader. */
export async function streamRun(app: TTestApp, key: string, input: unknown, agent: string) {
  const res = await app.api("/v1/responses", { key, body: { input, agent, stream: true } });
  expect(res.status).toBe(200);
  return readSse(res);
}

/** The question record of a `question.requested` frame. */
export type TQuestionRecord = { id: string; kind: string; status: string; responseId: string; questions: Array<Record<string, unknown>>; expiresAt: string };

export const questionOf = (frame: TWireFrame) => frame.question as TQuestionRecord;

/** The envelope of the terminal `response.completed` frame of a stream. */
export const envelopeOf = (frame: TWireFrame) => ({ ...frame, id: frame.responseId }) as unknown as TBody;

export const toolResultsOf = (env: TBody) => env.output.filter((i) => i.type === "tool_result") as Array<{ callId: string; name: string; output: Record<string, unknown> }>;
