import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startControlServer } from "../../server/api/http/control";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { cli } from "./cli-helpers";
import { invokeApproval } from "./helpers";
import { gwErr, gwOk, pick } from "./questions-helpers";
import { trpcGet, trpcPost } from "./security-helpers";
import { consoleDecide } from "./separation-helpers";

/**
 * Point 6 of issue 30, the display part: wherever the console, the trail or an export says who
 * decided or acted, the email comes with the name, read through the console's own procedures and
 * the export routes: approvals (requester, decider), the decided inbox, questions (asker,
 * answerer, and the refusal naming who answered first), the timeline's waits, Full access and
 * standing grants, the waiting list, the admin trail (actor and target) and both JSONL exports,
 * the CLI's export too. A member sees the email of whoever it may know by name. Quorum votes:
 * separation-of-duties.test.ts; the uniqueness of names: user-names.test.ts.
 */

let app: TTestApp;
let control: Awaited<ReturnType<typeof startControlServer>>;
let mia: TTestUser;
let olga: TTestUser;
let ada: TTestUser;
let audrey: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  control = await startControlServer(app.deps, app.dataDir);
  mia = await app.user("member", "Mia Requester");
  olga = await app.user("operator", "Olga Decider");
  ada = await app.user("admin", "Ada Admin");
  audrey = await app.user("auditor", "Audrey Auditor");
}, 60_000);
afterAll(async () => {
  await control?.close();
  await app?.close();
});

const data = async <T>(res: Promise<{ status: number; body: Record<string, unknown> }>): Promise<T> => {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { result: { data: T } }).result.data;
};
const jsonl = async (res: Response) => {
  expect(res.status).toBe(200);
  return (await res.text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
};

describe(`who decided or acted comes with an email (${testDbKind()})`, () => {
  test("approvals: requester and decider with their emails, for the member too; the timeline's wait; the trajectory export", async () => {
    const { env, approval } = await invokeApproval(app, mia.apiKey, "echo named");
    expect((await consoleDecide(app, { key: olga.apiKey }, approval.id, "approve")).status).toBe(200);

    for (const viewer of [mia, olga, audrey]) {
      const decided = await data<Array<Record<string, unknown>>>(trpcGet(app, { key: viewer.apiKey }, "approvals.list", { status: "decided" }));
      expect(decided.find((a) => a.id === approval.id), viewer.email).toMatchObject({ user: "Mia Requester", userEmail: mia.email, decidedByName: "Olga Decider", decidedByEmail: olga.email });
      const inbox = await data<{ rows: Array<Record<string, unknown>> }>(trpcGet(app, { key: viewer.apiKey }, "inbox.list", { status: "decided" }));
      expect(inbox.rows.find((a) => a.id === approval.id)).toMatchObject({ user: "Mia Requester", userEmail: mia.email, decidedByName: "Olga Decider", decidedByEmail: olga.email });
    }
    // The member may know who decided its approval: name and email.
    expect(await data(trpcGet(app, { key: mia.apiKey }, "users.names", { ids: [olga.userId, ada.userId] }))).toEqual({ [olga.userId]: { name: "Olga Decider", email: olga.email } });

    const timeline = await data<{ turns: Array<{ calls: Array<{ waits: Array<Record<string, unknown>> }> }> }>(trpcGet(app, { key: mia.apiKey }, "audit.timeline", { responseId: env.id }));
    const waits = timeline.turns.flatMap((t) => t.calls.flatMap((c) => c.waits));
    expect(waits).toContainEqual(expect.objectContaining({ kind: "approval", outcome: "approved", byUserId: olga.userId, byName: "Olga Decider", byEmail: olga.email }));

    const lines = await jsonl(await app.api(`/api/export/trajectory?responseId=${env.id}`, { key: mia.apiKey }));
    expect(lines.find((l) => l.type === "approval.resolved")).toMatchObject({ actorUserId: olga.userId, actorName: "Olga Decider", actorEmail: olga.email });
    expect(lines.find((l) => l.type === "response.created")).toMatchObject({ actorUserId: mia.userId, actorName: "Mia Requester", actorEmail: mia.email });
    // The CLI's export writes the same lines.
    const exported = await cli(app.dataDir, undefined, ["export", "--response", env.id]);
    expect(exported.status, exported.stderr).toBe(0);
    const cliLines = exported.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(cliLines.find((l) => l.type === "approval.resolved")).toMatchObject({ actorName: "Olga Decider", actorEmail: olga.email });
  }, 120_000);

  test("questions: the asker and the answerer with their emails, and the refusal that names who answered first", async () => {
    const { id } = await gwOk<{ id: string }>(app, mia.apiKey, "question.request", { questions: [pick()] });
    await gwOk(app, olga.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    const record = (await gwOk<{ question: Record<string, unknown> }>(app, mia.apiKey, "question.get", { id })).question;
    expect(record).toMatchObject({ requester: { userId: mia.userId, name: "Mia Requester", email: mia.email }, answeredBy: { userId: olga.userId, name: "Olga Decider", email: olga.email } });
    const late = await gwErr(app, mia.apiKey, "question.resolve", { id, answers: { color: ["Blue"] } }, "QUESTION_ALREADY_TERMINAL");
    expect(late.message).toBe(`This question is already answered (by Olga Decider (${olga.email})).`);
    const viaConsole = await trpcPost(app, { key: mia.apiKey }, "question.resolve", { id, answers: { color: ["Blue"] } });
    expect((viaConsole.body as { error: { message: string } }).error.message).toContain(`(by Olga Decider (${olga.email}))`);
  });

  test("Full access and standing grants, and the waiting list, name people with their emails", async () => {
    const { env, approval } = await invokeApproval(app, mia.apiKey, "echo granted");
    const granted = await app.api(`/v1/approvals/${approval.id}`, { key: olga.apiKey, body: { decision: "approve", grant: "session" } });
    expect(granted.status).toBe(200);
    const grants = await data<{ rows: Array<Record<string, unknown>> }>(trpcGet(app, { key: mia.apiKey }, "grants.page", { status: "all", limit: 50 }));
    expect(grants.rows.find((g) => g.sessionId === env.sessionId)).toMatchObject({ user: "Mia Requester", userEmail: mia.email, createdBy: olga.userId });

    await data(trpcPost(app, { key: olga.apiKey }, "sessions.setAccess", { sessionId: env.sessionId, access: "full" }));
    const session = await data<Record<string, unknown>>(trpcGet(app, { key: mia.apiKey }, "audit.session", { sessionId: env.sessionId }));
    expect(session).toMatchObject({ user: "Mia Requester", userEmail: mia.email, fullAccessGrant: { byUserId: olga.userId, by: "Olga Decider", byEmail: olga.email } });
    const sessions = await data<{ rows: Array<Record<string, unknown>> }>(trpcGet(app, { key: olga.apiKey }, "audit.sessions", { q: env.sessionId }));
    expect(sessions.rows[0]).toMatchObject({ userEmail: mia.email, fullAccessGrant: { by: "Olga Decider", byEmail: olga.email } });

    const { approval: waiting } = await invokeApproval(app, mia.apiKey, "echo waiting");
    const now = await data<{ items: Array<Record<string, unknown>> }>(trpcGet(app, { key: olga.apiKey }, "console.waiting"));
    expect(now.items.find((i) => i.id === waiting.id)).toMatchObject({ userName: "Mia Requester", userEmail: mia.email });
  }, 60_000);

  test("the admin trail names the actor and the person acted on with their emails, on the page and in its export", async () => {
    await data(trpcPost(app, { key: ada.apiKey }, "admin.renameUser", { userId: mia.userId, name: "Mia Renamed" }));
    const page = await data<{ rows: Array<Record<string, unknown>> }>(trpcGet(app, { key: audrey.apiKey }, "admin.trail", { action: "user.renamed", limit: 50 }));
    const row = page.rows.find((r) => r.targetId === mia.userId);
    expect(row).toMatchObject({ actorUserId: ada.userId, actorName: "Ada Admin", actorEmail: ada.email, targetName: "Mia Renamed", targetEmail: mia.email, detail: { from: "Mia Requester", to: "Mia Renamed" } });
    // An API key's row names its owner.
    const key = await data<{ id: string }>(trpcPost(app, { key: ada.apiKey }, "admin.createApiKey", { name: "named", userId: olga.userId }));
    const keyRows = await data<{ rows: Array<Record<string, unknown>> }>(trpcGet(app, { key: ada.apiKey }, "admin.trail", { action: "api_key.created", limit: 50 }));
    expect(keyRows.rows.find((r) => r.targetId === key.id)).toMatchObject({ targetName: "Olga Decider", targetEmail: olga.email });
    const actors = await data<Array<Record<string, unknown>>>(trpcGet(app, { key: audrey.apiKey }, "admin.trailActors"));
    expect(actors).toContainEqual({ id: ada.userId, name: "Ada Admin", email: ada.email });

    const exported = await jsonl(await app.api("/api/export/admin-trail?action=user.renamed", { key: audrey.apiKey }));
    expect(exported.find((r) => r.targetId === mia.userId)).toMatchObject({ actorName: "Ada Admin", actorEmail: ada.email, targetName: "Mia Renamed", targetEmail: mia.email });
    // Decisions show the new name at once, with the same email.
    const decided = await data<Array<Record<string, unknown>>>(trpcGet(app, { key: olga.apiKey }, "approvals.list", { status: "decided" }));
    expect(decided.filter((a) => a.userEmail === mia.email).every((a) => a.user === "Mia Renamed")).toBe(true);
  }, 60_000);
});
