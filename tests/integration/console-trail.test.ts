import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, invoke, invokeApproval, sleep, waitUntil } from "./helpers";

let app: TTestApp;
let owner: TTestUser;
let stranger: TTestUser;
let ada: TTestUser;
beforeAll(async () => {
  app = await startTestApp();
  owner = await app.user("member");
  ada = await app.user("operator", "Ada Lovelace");
  stranger = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

/** A tRPC query over HTTP as `user`; returns the status and the data (or error). */
async function trpcQuery<T>(user: TTestUser, path: string, input: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { authorization: `Bearer ${user.apiKey}` } });
  const body = (await res.json()) as { result?: { data: T }; error?: unknown };
  return { status: res.status, data: (body.result?.data ?? body.error) as T };
}

type TWait = { kind: string; waitedMs: number | null; outcome: string; byName: string | null; byUserId: string | null };
type TTimeline = {
  start: Array<{ type: string }>;
  turns: Array<{ turn: number | null; text: string; outputTokens: number; durationMs: number; modelMs: number | null; events: Array<{ type: string }>; calls: Array<{ name: string; durationMs: number | null; events: Array<{ type: string }>; waits: TWait[] }> }>;
  waitedMs: number;
  outputTokens: number;
  usage: { inputTokens: number; outputTokens: number };
  truncated: boolean;
};

describe(`audit.timeline through tRPC (${testDbKind()})`, () => {
  it("groups the run by turn and tool call and shows the wait for the person who decided", async () => {
    const { env, approval } = await invokeApproval(app, owner.apiKey, "echo timeline", { followedBy: [{ text: "All done." }] });
    await sleep(1100);
    expect((await decide(app, ada.apiKey, approval.id, "approve")).status).toBe(200);
    await waitUntil(async () => (await trpcQuery<TTimeline>(owner, "audit.timeline", { responseId: env.id })).data.turns.length === 2 || null);
    const { status, data } = await trpcQuery<TTimeline>(owner, "audit.timeline", { responseId: env.id });
    expect(status).toBe(200);
    expect(data.truncated).toBe(false);
    expect(data.start.map((e) => e.type)).toContain("response.created");
    const [first, second] = data.turns;
    expect(first?.turn).toBe(0);
    expect(first?.calls).toHaveLength(1);
    const call = first?.calls[0];
    expect(call?.name).toBe("exec");
    expect(call?.events.map((e) => e.type)).toEqual(expect.arrayContaining(["response.tool_call", "approval.requested", "approval.resolved", "response.tool_result"]));
    expect(call?.waits).toHaveLength(1);
    const wait = call?.waits[0];
    expect(wait).toMatchObject({ kind: "approval", outcome: "approved", byName: "Ada Lovelace", byUserId: ada.userId });
    expect(wait?.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(call?.durationMs).toBeGreaterThanOrEqual(wait?.waitedMs ?? 0);
    expect(data.waitedMs).toBe(wait?.waitedMs);
    // Each turn keeps its own text; lifecycle events are in the tree (the page hides them by default).
    expect(second).toMatchObject({ turn: 1, text: "All done.", calls: [] });
    expect(second?.events.map((e) => e.type)).toContain("response.completed");
    expect(data.usage).toEqual(expect.objectContaining({ outputTokens: expect.any(Number), inputTokens: expect.any(Number) }));
  });

  it("refuses a response the caller may not read, as if it did not exist", async () => {
    const env = await invoke(app, owner.apiKey, "hello");
    const res = await trpcQuery<{ data?: { code?: string } }>(stranger, "audit.timeline", { responseId: env.id });
    expect(res.status).toBe(404);
  });
});

type TUsageRow = { day: string; responses: number };

describe(`console.usage groups days in the viewer's time zone (${testDbKind()})`, () => {
  it("the same response falls on different days at UTC+14 and UTC-11, and an unknown zone is refused", async () => {
    const user = await app.user("member");
    await invoke(app, user.apiKey, "hello");
    const range = { from: new Date(Date.now() - 3 * 86_400_000).toISOString(), to: new Date(Date.now() + 3 * 86_400_000).toISOString() };
    const dayIn = async (timeZone: string) => {
      const { status, data } = await trpcQuery<TUsageRow[]>(user, "console.usage", { ...range, timeZone });
      expect(status).toBe(200);
      expect(data).toHaveLength(1);
      return data[0]?.day;
    };
    const fmt = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
    const east = await dayIn("Pacific/Kiritimati");
    const west = await dayIn("Pacific/Pago_Pago");
    expect(east).toBe(fmt("Pacific/Kiritimati"));
    expect(west).toBe(fmt("Pacific/Pago_Pago"));
    expect(east).not.toBe(west);
    // Without a zone: UTC days, as before.
    const utc = await trpcQuery<TUsageRow[]>(user, "console.usage", range);
    expect(utc.data[0]?.day).toBe(fmt("UTC"));
    for (const bad of ["Mars/Olympus", "UTC'; drop table users; --"]) {
      expect((await trpcQuery(user, "console.usage", { ...range, timeZone: bad })).status).toBe(400);
    }
  });
});

type TContext = { agent: string | null; task: string | null; lastMessage: string | null; responseId: string | null };

describe(`question.context through tRPC (${testDbKind()})`, () => {
  it("names the agent and task and quotes the run's last message to whoever may read the run", async () => {
    const ask = { name: "ask_user", arguments: { questions: [{ id: "env", header: "Env", question: "Which environment?", options: [{ label: "staging" }, { label: "prod" }] }] } };
    const env = await invoke(app, owner.apiKey, { script: [{ text: "I am ready to deploy.", toolCalls: [ask] }, { text: "done" }] }, { metadata: { task: "Deploy the site" } });
    expect(env.status).toBe("requires_action");
    const questionId = (env.requiredAction as { id: string }).id;
    for (const reader of [owner, ada]) {
      const { status, data } = await trpcQuery<TContext>(reader, "question.context", { id: questionId });
      expect(status).toBe(200);
      expect(data).toMatchObject({ task: "Deploy the site", lastMessage: "I am ready to deploy.", responseId: env.id });
      expect(data.agent).toEqual(expect.any(String));
    }
    // Someone the question is not for learns nothing, not even that it exists.
    expect((await trpcQuery(stranger, "question.context", { id: questionId })).status).toBe(404);
  });
});
