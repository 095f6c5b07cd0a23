import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { expect } from "vitest";
import { trajectoryOf } from "../../db/repositories/events";
import { responseSteps, steeringMessages } from "../../db/schema";
import type { TTestApp } from "../../server/testing/test-app";
import { getResponse, ok200, readSse, type TBody, type TWireFrame, waitUntil } from "./helpers";

/** A scripted turn with every field the attempt runtime reads. */
export type TRuntimeTurn = {
  text?: string;
  reasoning?: string;
  planText?: string;
  toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> }>;
  usage?: { outputTokens?: number; inputTokens?: number };
};

/** A scripted input with the runtime knobs (fallback turns, execution timeout, approval TTL). */
export const runtimeScript = (turns: TRuntimeTurn[], extra: { fallback?: TRuntimeTurn[]; timeoutMs?: number; approvalTtlMs?: number } = {}) => ({ script: turns, ...extra });

/** The whole trajectory of a response (frames and non-frame events), in order. */
export const trajectory = (app: TTestApp, responseId: string) => trajectoryOf(app.deps.db, responseId);

export type TTrajectoryRow = Awaited<ReturnType<typeof trajectory>>[number];

/** Trajectory rows of one type. */
export async function eventsOf(app: TTestApp, responseId: string, type: string): Promise<TTrajectoryRow[]> {
  return (await trajectory(app, responseId)).filter((e) => e.type === type);
}

/** Every frame of a response as `GET /v1/responses/{id}/events?after=-1` replays it (the response must be settled). */
export async function replayFrames(app: TTestApp, key: string, env: { id: string; sessionId: string }): Promise<TWireFrame[]> {
  const res = await app.api(`/v1/responses/${env.id}/events?sessionId=${encodeURIComponent(env.sessionId)}&after=-1`, { key });
  expect(res.status).toBe(200);
  const sse = readSse(res);
  await Promise.race([sse.done, new Promise((_, reject) => setTimeout(() => reject(new Error("replay did not close")), 30_000))]);
  return sse.events.map((e) => e.data);
}

/** `POST /v1/responses/{id}/steer`. */
export const steer = (app: TTestApp, key: string, responseId: string, text: unknown) => app.api(`/v1/responses/${responseId}/steer`, { key, body: { text } });

/** The steering rows of a response, oldest first. */
export async function steeringRows(app: TTestApp, responseId: string) {
  const all = await app.deps.db.select().from(steeringMessages).where(eq(steeringMessages.responseId, responseId));
  return all.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** The stored result of one step (`model:N`, `tool:call_N_M`, `outcome:N`). */
export async function stepResult<T = Record<string, unknown>>(app: TTestApp, responseId: string, key: string): Promise<T | null> {
  const [row] = await app.deps.db.select().from(responseSteps).where(and(eq(responseSteps.responseId, responseId), eq(responseSteps.key, key)));
  return (row?.result as T | undefined) ?? null;
}

/** Polls `GET /v1/responses/{id}` until the response is terminal; returns that envelope. */
export async function settledEnvelope(app: TTestApp, key: string, env: { id: string; sessionId: string }, timeoutMs = 30_000): Promise<TBody> {
  return waitUntil(
    async () => {
      const body = await ok200(await getResponse(app, key, env.id, env.sessionId));
      return ["completed", "denied", "cancelled", "failed"].includes(body.status) ? body : null;
    },
    timeoutMs,
    `response ${env.id} to settle`,
  );
}

/** `model.turn` trajectory events keyed by turn index. */
export async function modelTurns(app: TTestApp, responseId: string): Promise<Array<Record<string, unknown>>> {
  return (await eventsOf(app, responseId, "model.turn")).map((e) => e.data as Record<string, unknown>);
}

/** Whether a process is alive (a zombie waiting to be reaped counts as gone). */
export function processAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const state = readFileSync(stat, "utf8").replace(/^.*\) /s, "")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/**
 * Waits for `pid.txt` written by a command in the workspace (it started), then returns the host pid
 * of the process now running there. The pid the command wrote is its own view: inside the
 * bubblewrap sandbox it has its own PID namespace, so the host pid is found by its working directory.
 */
export async function waitForPid(cwd: string, file = "pid.txt"): Promise<number> {
  const path = join(cwd, file);
  await waitUntil(() => existsSync(path) && readFileSync(path, "utf8").trim() !== "", 30_000, `${file} in ${cwd}`);
  const workspace = realpathSync(cwd);
  return waitUntil(() => processesIn(workspace).at(-1) ?? null, 30_000, `a process running in ${cwd}`);
}

/** Live host pids whose working directory is `dir` (the sandbox's own helpers excluded), oldest first. */
export function processesIn(dir: string): number[] {
  const found: Array<{ pid: number; start: number }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) !== dir) continue;
      const comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
      if (comm === "bwrap" || comm === "setpriv" || !processAlive(Number(entry))) continue;
      const start = Number(readFileSync(`/proc/${entry}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[19]);
      found.push({ pid: Number(entry), start });
    } catch {
      // Exited mid-scan, or not ours to read.
    }
  }
  return found.sort((a, b) => a.start - b.start).map((f) => f.pid);
}

/** A tRPC query over HTTP GET (`?input=` JSON) with an API key. */
export async function trpcGet(app: TTestApp, key: string, path: string, input: unknown): Promise<{ status: number; body: { result?: { data: unknown }; error?: { message: string; data?: { code?: string } } } }> {
  const res = await fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as never };
}

/** A tRPC mutation over HTTP POST with an API key. */
export async function trpcPost(app: TTestApp, key: string, path: string, input: unknown): Promise<{ status: number; body: { result?: { data: unknown }; error?: { message: string; data?: { code?: string } } } }> {
  const res = await fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(input) });
  return { status: res.status, body: (await res.json()) as never };
}
