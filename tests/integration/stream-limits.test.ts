import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp } from "../../server/testing/test-app";
import { expectError, invoke, invokeApproval, LiveClient, rows, script, waitUntil } from "./helpers";
import { openStream, streamShows, type TOpenStream } from "./stream-helpers";

/**
 * Point 7 of issue 14, the parts on long-lived connections: open SSE streams, WebSockets and tRPC
 * subscriptions are capped per user (a clear refusal past the cap, a slot freed by closing one),
 * and a bare WebSocket connect stores no session and creates no workspace until the first run.
 */

const CAP = 4;
let app: TTestApp;
const sockets: LiveClient[] = [];
const streams: TOpenStream[] = [];

beforeAll(async () => {
  app = await startTestApp({ maxStreamsPerUser: CAP });
});
afterAll(async () => {
  for (const s of sockets) s.close();
  for (const s of streams) await s.cancel();
  await app?.close();
});

const CAP_SENTENCE = `Too many open streams: at most ${CAP} per user on this server (SSE, WebSockets, subscriptions). Close one and retry.`;

const sessionRows = async (sessionId: string) => Number((await rows<{ n: number | string }>(app, `select count(*) as n from agent_sessions where id = '${sessionId}'`))[0]?.n);
const workspaces = (): string[] => (existsSync(join(app.dataDir, "workspaces")) ? readdirSync(join(app.dataDir, "workspaces")).sort() : []);

describe(`open streams per user are capped (${testDbKind()})`, () => {
  it("past the cap, SSE, WebSocket and tRPC subscriptions are refused with a sentence; closing one frees a slot; other users are not affected", async () => {
    const user = await app.user("member");
    const { env } = await invokeApproval(app, user.apiKey, "echo waiting");
    const events = `/v1/responses/${env.id}/events?sessionId=${env.sessionId}`;
    const first = await LiveClient.open(app, user.apiKey);
    sockets.push(first, await LiveClient.open(app, user.apiKey));
    for (let i = 0; i < CAP - 2; i++) {
      const stream = await openStream(app, { key: user.apiKey }, events);
      await streamShows(stream, /approval\.requested/);
      streams.push(stream);
    }

    // The cap+1-th of every kind: a 429 with the sentence, a close 1013 with it, tRPC's 429.
    const before = await rows(app, "select id from responses");
    const sse = await app.api(events, { key: user.apiKey });
    expect(await expectError(sse, 429, "too_many_streams")).toEqual({ detail: CAP_SENTENCE, code: "too_many_streams" });
    const streamed = await app.api("/v1/responses", { key: user.apiKey, body: { input: script([{ text: "never runs" }]), stream: true } });
    await expectError(streamed, 429, "too_many_streams");
    expect(await rows(app, "select id from responses")).toEqual(before);
    const socket = await LiveClient.open(app, user.apiKey, { connect: false });
    const closed = await socket.closed;
    expect(closed.code).toBe(1013);
    expect(closed.reason).toBe(CAP_SENTENCE);
    const subscription = await fetch(`${app.url}/api/trpc/console.onActivity?input=%7B%7D`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    expect(subscription.status).toBe(429);
    expect(((await subscription.json()) as { error: { message: string; data: { code: string } } }).error).toMatchObject({ message: CAP_SENTENCE, data: { code: "TOO_MANY_REQUESTS" } });
    // A plain request is not a stream and is not capped.
    expect((await invoke(app, user.apiKey, script([{ text: "not a stream" }]))).status).toBe("completed");

    // Another user has slots of its own.
    const other = await app.user("member");
    sockets.push(await LiveClient.open(app, other.apiKey));

    // Closing one frees its slot.
    first.close();
    await first.closed;
    const freed = await waitUntil(async () => {
      const stream = await openStream(app, { key: user.apiKey }, events);
      if (stream.status === 200) return stream;
      return null;
    }, 30_000, "a freed slot");
    streams.push(freed);
    await streamShows(freed, /approval\.requested/);
  });
});

describe(`a bare WebSocket connect stores nothing until the first run (${testDbKind()})`, () => {
  it("connect answers session.connected but creates no session row and no workspace; the first run creates both under that id", async () => {
    const user = await app.user("member");
    const before = workspaces();
    const live = await LiveClient.open(app, user.apiKey);
    sockets.push(live);
    const sessionId = live.sessionId;
    expect(sessionId).toMatch(/^sess_[0-9a-f]{32}$/);
    expect(await sessionRows(sessionId)).toBe(0);
    expect(workspaces()).toEqual(before);

    // Another user cannot take the id over, over the socket or over HTTP, before or after it is used.
    const intruder = await app.user("member");
    const foreign = await LiveClient.open(app, intruder.apiKey, { connect: false });
    foreign.send({ type: "connect", sessionId });
    expect((await foreign.waitFor((f) => f.type === "error")).code).toBe("not_found");
    expect((await foreign.closed).code).toBe(1008);
    await expectError(await app.api("/v1/responses", { key: intruder.apiKey, body: { input: "mine now", sessionId } }), 404, "not_found");
    expect(await sessionRows(sessionId)).toBe(0);

    // Its owner may reconnect to it before any run (still nothing stored) ...
    const again = await LiveClient.open(app, user.apiKey, { sessionId });
    sockets.push(again);
    expect(again.sessionId).toBe(sessionId);
    expect(await sessionRows(sessionId)).toBe(0);
    expect(workspaces()).toEqual(before);

    // ... and the first run stores the session under that id, with its workspace.
    again.send({ type: "response.create", input: script([{ text: "first run" }]), requestId: "first" });
    const done = await again.waitFor((f) => f.type === "response.completed" && f.requestId === "first");
    expect(done.sessionId).toBe(sessionId);
    expect(await sessionRows(sessionId)).toBe(1);
    expect(workspaces()).toEqual([...before, sessionId].sort());
    const [row] = await rows<{ user_id: string }>(app, `select user_id from agent_sessions where id = '${sessionId}'`);
    expect(row?.user_id).toBe(user.userId);

    // The first socket's next run lands in the same session; HTTP may use it too; the intruder still may not.
    live.send({ type: "response.create", input: script([{ text: "second run" }]), requestId: "second" });
    expect((await live.waitFor((f) => f.type === "response.completed" && f.requestId === "second")).sessionId).toBe(sessionId);
    expect((await invoke(app, user.apiKey, script([{ text: "over http" }]), { sessionId })).sessionId).toBe(sessionId);
    await expectError(await app.api("/v1/responses", { key: intruder.apiKey, body: { input: "mine now", sessionId } }), 404, "not_found");
    expect(await sessionRows(sessionId)).toBe(1);
  });
});
