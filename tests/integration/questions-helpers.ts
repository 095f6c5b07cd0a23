import { expect, vi } from "vitest";
import type { TTestApp } from "../../server/testing/test-app";
import { ok200, rows, script, tableCounts, type TBody, type TScriptTurn, waitUntil } from "./helpers";

/** What `POST /v1/gateway/{method}` answers. */
export type TGatewayReply<T = Record<string, unknown>> =
  | { ok: true; payload: T }
  | { ok: false; error: { code: string; message: string; details: { reason: string; [key: string]: unknown } } };

/** Calls a Gateway method over HTTP and returns the status and parsed body. */
export async function gateway<T = Record<string, unknown>>(app: TTestApp, key: string, method: string, params: unknown): Promise<{ status: number; body: TGatewayReply<T> }> {
  const res = await app.api(`/v1/gateway/${method}`, { key, body: params });
  const text = await res.text();
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(text).not.toMatch(/\n\s+at /);
  return { status: res.status, body: JSON.parse(text) as TGatewayReply<T> };
}

/** A Gateway call that must succeed; returns the payload. */
export async function gwOk<T = Record<string, unknown>>(app: TTestApp, key: string, method: string, params: unknown): Promise<T> {
  const { status, body } = await gateway<T>(app, key, method, params);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.ok, JSON.stringify(body)).toBe(true);
  expect(Object.keys(body).sort()).toEqual(["ok", "payload"]);
  return (body as { ok: true; payload: T }).payload;
}

/** A Gateway call that must fail with the contract's error shape and this reason; returns the error. */
export async function gwErr(app: TTestApp, key: string, method: string, params: unknown, reason: string, status = 400) {
  const { status: got, body } = await gateway(app, key, method, params);
  expect(got, JSON.stringify(body)).toBe(status);
  expect(body.ok).toBe(false);
  expect(Object.keys(body).sort()).toEqual(["error", "ok"]);
  const error = (body as Extract<TGatewayReply, { ok: false }>).error;
  if (status === 400) expect(error.code).toBe("INVALID_REQUEST");
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.details.reason, JSON.stringify(body)).toBe(reason);
  return error;
}

/** A tRPC query over HTTP GET (`?input=` JSON), with an API key. */
export async function trpcQuery(app: TTestApp, key: string, path: string, input?: unknown) {
  const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await fetch(`${app.url}/api/trpc/${path}${qs}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as TTrpcBody };
}

/** A tRPC mutation over HTTP POST with a JSON body, with an API key. */
export async function trpcMutation(app: TTestApp, key: string, path: string, input: unknown) {
  const res = await fetch(`${app.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as TTrpcBody };
}

export type TTrpcBody = {
  result?: { data: Record<string, unknown> };
  error?: { message: string; code: number; data: { code: string; httpStatus: number; reason: string | null; details: Record<string, unknown> | null; domainCode: string | null; stack?: unknown } };
};

/** A simple gateway question (id must match ^[a-z][a-z0-9_]*$). */
export const pick = (questionId = "color", extra: Record<string, unknown> = {}) => ({
  questionId,
  header: "Color",
  question: "Which color?",
  options: [{ label: "Red" }, { label: "Blue", value: "blue" }],
  ...extra,
});

/** A scripted run that calls one question tool, then says `after`. */
export const toolScript = (name: string, args: Record<string, unknown>, after = "Thanks.", extra: { text?: string } = {}) =>
  script([{ text: extra.text ?? "Let me ask. ", toolCalls: [{ name, arguments: args }] }, { text: after }]);

export const askScript = (questions: unknown[], extra: { timeoutSeconds?: number; after?: string; more?: TScriptTurn[] } = {}) =>
  script([
    { text: "Let me ask. ", toolCalls: [{ name: "ask_user", arguments: { questions, ...(extra.timeoutSeconds !== undefined ? { timeoutSeconds: extra.timeoutSeconds } : {}) } }] },
    ...(extra.more ?? []),
    { text: extra.after ?? "Thanks." },
  ]);

/** Row counts of every table a question request could write. */
export type TCounts = Record<string, number> & { questions: number; secret_values: number; responses: number };

export async function questionCounts(app: TTestApp): Promise<TCounts> {
  const out = (await tableCounts(app)) as TCounts;
  // Frames only: the host may append internal, non-frame trajectory events after a boundary.
  delete out.response_events;
  const [frames] = await rows<{ n: number | string }>(app, "select count(*) as n from response_events where frame_seq is not null");
  out.response_frames = Number(frames?.n ?? 0);
  for (const table of ["questions", "secret_values"]) {
    const [row] = await rows<{ n: number | string }>(app, `select count(*) as n from ${table}`);
    out[table] = Number(row?.n ?? 0);
  }
  return out;
}

/** Every public table whose rows, as text, contain `needle`. */
export async function tablesContaining(app: TTestApp, needle: string): Promise<string[]> {
  const tables = await rows<{ table_name: string }>(
    app,
    "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name",
  );
  expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(["questions", "secret_values", "responses", "response_events", "response_steps"]));
  const hits: string[] = [];
  for (const { table_name } of tables) {
    const found = await rows<{ n: number | string }>(app, `select count(*) as n from "${table_name}" t where t::text like '%${needle.replace(/'/g, "''")}%'`);
    if (Number(found[0]?.n ?? 0) > 0) hits.push(table_name);
  }
  return hits;
}

/** The latest envelope of a response, polled until `pred` holds. */
export async function pollEnvelope(app: TTestApp, key: string, env: { id: string; sessionId: string }, pred: (e: TBody) => boolean, timeoutMs = 30_000): Promise<TBody> {
  let last: TBody | null = null;
  try {
    return await waitUntil(
      async () => {
        last = await ok200(await app.api(`/v1/responses/${env.id}?sessionId=${encodeURIComponent(env.sessionId)}`, { key }));
        return pred(last) ? last : null;
      },
      timeoutMs,
      "envelope",
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last: ${JSON.stringify(last)}`);
  }
}

/** The question row as stored. */
export async function questionRow(app: TTestApp, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await rows(app, `select * from questions where id = '${id.replace(/'/g, "''")}'`);
  return row;
}

export const responseCount = async (app: TTestApp): Promise<number> => Number((await rows<{ n: number | string }>(app, "select count(*) as n from responses"))[0]?.n ?? 0);

/** The tool results of an envelope's output. */
export const toolResults = (env: TBody) => env.output.filter((i) => i.type === "tool_result") as Array<{ type: "tool_result"; callId: string; name: string; output: unknown }>;

/**
 * Watches question waiters on the server's bus (a synchronization point instead of a sleep):
 * `listening()` counts the waiters that subscribed since, `heard` the question changes delivered
 * to them (what wakes a waiter). `stop()` undoes it.
 */
export function watchWaiters(app: TTestApp) {
  const bus = app.deps.bus;
  const subscribe = bus.subscribeQuestion;
  const heard: string[] = [];
  let listening = 0;
  const spy = vi.spyOn(bus, "subscribeQuestion").mockImplementation((listener) => {
    listening++;
    return subscribe((change) => {
      heard.push(change.questionId);
      listener(change);
    });
  });
  return {
    heard,
    listening: () => listening,
    /** Resolves once `n` waiters are subscribed (each waits for the question to change). */
    until: (n: number) => waitUntil(() => listening >= n, 30_000, `${n} waiter(s) to listen`),
    stop: () => spy.mockRestore(),
  };
}
