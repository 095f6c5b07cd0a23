import { existsSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import WebSocket from "ws";
import type { TEnvelope, TRequiredAction } from "../../server/core/envelope";
import type { TTestApp } from "../../server/testing/test-app";

/** What the `/v1` routes answer with: an envelope, sometimes tagged with the continuation id. */
export type TBody = TEnvelope & { approvalId?: string; clientToolId?: string; detail?: string; code?: string };

/** A wire frame as SSE and WebSocket clients receive it. */
export type TWireFrame = {
  type: string;
  sequence: number;
  responseId: string;
  sessionId: string;
  requestId?: string;
  status?: string;
  code?: string;
  [key: string]: unknown;
};

export type TScriptTurn = {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> }>;
  usage?: { outputTokens?: number; inputTokens?: number };
};

/** A scripted-agent input. */
export const script = (turns: TScriptTurn[], extra: { approvalTtlMs?: number; clientToolTtlMs?: number } = {}) => ({ script: turns, ...extra });

/** Turn with one `exec` call (needs approval). */
export const execTurn = (command: string, text?: string): TScriptTurn => ({ ...(text ? { text } : {}), toolCalls: [{ name: "exec", arguments: { command } }] });

/** Asserts the exact error shape `{"detail": string, "code": string}` with the given status and code. */
export async function expectError(res: Response, status: number, code: string): Promise<{ detail: string; code: string }> {
  const text = await res.text();
  expect(res.status, `expected ${status} ${code}, got ${res.status} ${text}`).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["code", "detail"]);
  expect(typeof body.detail).toBe("string");
  expect((body.detail as string).length).toBeGreaterThan(0);
  expect(body.code).toBe(code);
  expect(text).not.toMatch(/\n\s+at /); // never a stack trace
  return body as { detail: string; code: string };
}

/** Reads a JSON 200 body, failing with the body text otherwise. */
export async function ok200(res: Response): Promise<TBody> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as TBody;
}

/** POST /v1/responses (non-streaming) and return the first boundary envelope. */
export async function invoke(app: TTestApp, key: string, input: unknown, extra: Record<string, unknown> = {}): Promise<TBody> {
  return ok200(await app.api("/v1/responses", { key, body: { input, ...extra } }));
}

/** Invokes a one-exec script and returns the envelope (requires_action) with its approval. */
export async function invokeApproval(app: TTestApp, key: string, command: string, extra: { approvalTtlMs?: number; sessionId?: string; followedBy?: TScriptTurn[] } = {}) {
  const env = await invoke(app, key, script([execTurn(command), ...(extra.followedBy ?? [{ text: "done" }])], { approvalTtlMs: extra.approvalTtlMs }), extra.sessionId ? { sessionId: extra.sessionId } : {});
  expect(env.status).toBe("requires_action");
  const action = env.requiredAction as Extract<TRequiredAction, { type: "human_approval" }>;
  expect(action.type).toBe("human_approval");
  expect(action.id).toMatch(/^approval_[0-9a-f]{32}$/);
  expect(action.callId).toBe(env.id);
  expect(env.outputText).toBe("");
  expect(env.output).toEqual([]);
  // Clients see the working directory relative to the workspace, never the server's paths.
  expect(action.cwd).toBe(".");
  return { env, approval: action, cwd: workspaceOf(app, env.sessionId) };
}

/** The session's workspace on the server's disk (tests read what commands wrote there). */
export const workspaceOf = (app: { dataDir: string }, sessionId: string): string => realpathSync(join(app.dataDir, "workspaces", sessionId));

export const decide = (app: TTestApp, key: string, approvalId: string, decision: "approve" | "deny") =>
  app.api(`/v1/approvals/${approvalId}`, { key, body: { decision } });

export const getResponse = (app: TTestApp, key: string, id: string, sessionId: string) =>
  app.api(`/v1/responses/${id}?sessionId=${encodeURIComponent(sessionId)}`, { key });

/** Polls until `fn` returns a truthy value; the deadline is only a failure bound (generous: a loaded machine is slow, not wrong). */
export async function waitUntil<T>(fn: () => T | Promise<T>, timeoutMs = 30_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The response once it no longer waits or runs (completed, failed, cancelled, …), read as its owner reads it. */
export const settledResponse = (app: TTestApp, key: string, env: { id: string; sessionId: string }, timeoutMs = 60_000): Promise<TBody> =>
  waitUntil(
    async () => {
      const body = await ok200(await getResponse(app, key, env.id, env.sessionId));
      return body.status !== "requires_action" && body.status !== "in_progress" ? body : null;
    },
    timeoutMs,
    `response ${env.id} to settle`,
  );

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines in a file of the workspace, 0 when it does not exist. */
export const lineCount = (dir: string, file: string): number => {
  // A relative directory would silently read the test runner's own directory.
  if (!isAbsolute(dir)) throw new Error(`lineCount needs the workspace's absolute path, got ${JSON.stringify(dir)}`);
  return existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8").split("\n").filter(Boolean).length : 0;
};

/** Rows of a raw SQL query on either driver. */
export async function rows<T = Record<string, unknown>>(app: TTestApp, query: string): Promise<T[]> {
  const result = (await app.deps.db.execute(sql.raw(query))) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/**
 * Row counts of the tables a request could half-write. Trajectory rows count only wire frames:
 * the host records an earlier run's lifecycle events (e.g. `suspended`) just after its boundary,
 * which is not something a later, rejected request wrote.
 */
export async function tableCounts(app: TTestApp): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const queries: Record<string, string> = {
    response_events: "select count(*) as n from response_events where frame_seq is not null",
  };
  for (const table of ["agent_sessions", "responses", "response_events", "response_steps", "approvals", "client_tool_requests", "payment_cards"]) {
    const [row] = await rows<{ n: number | string }>(app, queries[table] ?? `select count(*) as n from ${table}`);
    out[table] = Number(row?.n ?? 0);
  }
  return out;
}

export async function expectHealthy(app: TTestApp): Promise<void> {
  const res = await app.api("/v1/healthz");
  expect(res.status).toBe(200);
  expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
}

/** An SSE frame as parsed from the stream. */
export type TSseEvent = { id?: string; event: string; data: TWireFrame };

/** Reads an SSE response incrementally; `done` resolves when the server closes the stream. */
export function readSse(res: Response) {
  const events: TSseEvent[] = [];
  const waiters: Array<() => void> = [];
  let raw = "";
  const notify = () => {
    for (const w of waiters.splice(0)) w();
  };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let failure: unknown = null;
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done: finished } = await reader.read().catch((error: unknown) => {
        failure = error;
        return { value: undefined, done: true as const };
      });
      if (finished) break;
      const chunk = decoder.decode(value, { stream: true });
      raw += chunk;
      buffer += chunk;
      let index = buffer.indexOf("\n\n");
      while (index >= 0) {
        const block = buffer.slice(0, index);
        buffer = buffer.slice(index + 2);
        index = buffer.indexOf("\n\n");
        const fields: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":") || !line.includes(":")) continue;
          const at = line.indexOf(":");
          fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, "");
        }
        if (fields.data === undefined) continue;
        events.push({ id: fields.id, event: fields.event ?? "message", data: JSON.parse(fields.data) as TWireFrame });
        notify();
      }
    }
    notify();
  })();
  let closed = false;
  void done.finally(() => {
    closed = true;
  });
  return {
    events,
    done,
    raw: () => raw,
    isClosed: () => closed,
    /** The transport error that ended the stream, if it did not end cleanly. */
    failure: () => failure,
    /** Stops reading (the client goes away). */
    cancel: async () => {
      await reader.cancel().catch(() => {});
      await done;
    },
    /** Resolves once an event matches (already received or later). */
    waitFor: async (pred: (e: TSseEvent) => boolean, timeoutMs = 30_000): Promise<TSseEvent> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(pred);
        if (found) return found;
        if (closed) throw new Error(`SSE stream closed without the expected event; got ${events.map((e) => e.event).join(",")}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for SSE event; got ${events.map((e) => e.event).join(",")}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
  };
}

/** Asserts the structural frame contract of a list of SSE events: names match types, ids are sequences. */
export function expectWellFormedSse(events: TSseEvent[], responseId: string, sessionId: string): void {
  for (const e of events) {
    expect(e.data.type).toBe(e.event);
    expect(e.id).toBe(String(e.data.sequence));
    expect(e.data.responseId).toBe(responseId);
    expect(e.data.sessionId).toBe(sessionId);
    expect(Number.isInteger(e.data.sequence)).toBe(true);
  }
}

/** A `/v1/live` client that records every frame it receives. */
export class LiveClient {
  readonly frames: TWireFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];
  closeInfo: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      this.frames.push(JSON.parse(data.toString()) as TWireFrame);
      this.notify();
    });
    this.closed = new Promise((resolve) => {
      ws.on("close", (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        this.notify();
        resolve(this.closeInfo);
      });
    });
    ws.on("error", () => {});
  }

  /** Opens a socket; without `connect: false` it also sends the connect frame and waits for session.connected. */
  static async open(app: Pick<TTestApp, "url">, key: string | null, opts: { sessionId?: string; connect?: boolean; query?: string; headers?: Record<string, string> } = {}): Promise<LiveClient> {
    const url = `${app.url.replace(/^http/, "ws")}/v1/live${opts.query ? `?${opts.query}` : ""}`;
    const ws = new WebSocket(url, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers } });
    const client = new LiveClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    if (opts.connect !== false) {
      client.send({ type: "connect", ...(opts.sessionId ? { sessionId: opts.sessionId } : {}) });
      await client.waitFor((f) => f.type === "session.connected");
    }
    return client;
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  get sessionId(): string {
    return this.frames.find((f) => f.type === "session.connected")?.sessionId as string;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first frame (received so far or later) matching `pred`. */
  async waitFor(pred: (f: TWireFrame) => boolean, timeoutMs = 30_000): Promise<TWireFrame> {
    return this.waitForCount(pred, 1, timeoutMs).then((all) => all[0] as TWireFrame);
  }

  /** Resolves once `count` frames match `pred`. */
  async waitForCount(pred: (f: TWireFrame) => boolean, count: number, timeoutMs = 30_000): Promise<TWireFrame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.filter(pred);
      if (found.length >= count) return found;
      if (this.closeInfo) throw new Error(`socket closed (${this.closeInfo.code}) before the expected frame; got ${this.frames.map((f) => f.type).join(",")}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for frames; got ${this.frames.map((f) => `${f.type}${f.code ? `(${f.code})` : ""}`).join(",")}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Frames of one response, in arrival order. */
  of(responseId: string): TWireFrame[] {
    return this.frames.filter((f) => f.responseId === responseId);
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Asserts that frames appear in this order of types with strictly increasing sequences. */
export function expectOrdered(frames: TWireFrame[], types: string[]): void {
  expect(frames.map((f) => f.type)).toEqual(types);
  for (let i = 1; i < frames.length; i++) expect((frames[i] as TWireFrame).sequence).toBeGreaterThan((frames[i - 1] as TWireFrame).sequence);
}
