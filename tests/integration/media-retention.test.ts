import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, invoke, ok200, type TBody, waitUntil } from "./helpers";

/**
 * Media retention (COUNTERSIGN_MEDIA_RETENTION_DAYS, here a short retention given to the app):
 * a stored file no run used within the retention is deleted by the host's sweep; a run that is
 * not over keeps its files however old they are; the same bytes attached later are stored anew.
 */

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const RETENTION_MS = 1500;

let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ media: { retentionMs: RETENTION_MS }, expirySweepMs: 200 });
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga")]);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

type TFileItem = { id: string; name: string; url: string };
const fileOf = (env: TBody): TFileItem => {
  const item = env.output.find((i) => i.type === "attachment") as TFileItem | undefined;
  expect(item, JSON.stringify(env.output)).toBeDefined();
  return item as TFileItem;
};
/** A run given `name` that hands the same file back (its envelope names the stored media's id and URL). */
const echoFile = (name: string, data: string, turns: unknown[] = []) =>
  invoke(app, alice.apiKey, { script: [{ text: `Here is ${name}.`, replyAttachments: [`attachments/${name}`], ...(turns.length > 0 ? { toolCalls: [{ name: "exec", arguments: { command: `wc -c < attachments/${name}` } }] } : {}) }, ...turns] }, {
    attachments: [{ name, mediaType: name.endsWith(".png") ? "image/png" : "text/plain", data }],
  });
const status = async (url: string): Promise<number> => (await app.api(url, { key: alice.apiKey })).status;

describe(`media retention (${testDbKind()})`, () => {
  test("an unused file goes after the retention; a run waiting for a person keeps its files; the same bytes come back as new media", async () => {
    const done = await echoFile("old.png", PNG);
    expect(done.status).toBe("completed");
    const old = fileOf(done);
    const waiting = await echoFile("notes.txt", Buffer.from("kept while waiting\n").toString("base64"), [{ text: "Counted." }]);
    expect(waiting.status).toBe("requires_action");
    // A waiting run's envelope has no output yet: the inbox lists its files.
    const approval = waiting.requiredAction as { id: string };
    const listed = await app.api(`/api/trpc/inbox.files?input=${encodeURIComponent(JSON.stringify({ approvalId: approval.id }))}`, { key: alice.apiKey });
    const files = ((await listed.json()) as { result: { data: Array<TFileItem & { origin: string }> } }).result.data;
    expect(files.map((f) => [f.name, f.origin])).toEqual([["notes.txt", "given"]]);
    const kept = files[0] as TFileItem;

    // The finished run's file goes once nothing used it within the retention.
    await waitUntil(async () => (await status(old.url)) === 404 || null, 60_000, "the unused file to be deleted");
    await expectError(await app.api(old.url, { key: alice.apiKey }), 404, "not_found");
    const again = await app.api("/v1/responses", { key: alice.apiKey, body: { input: "hi", attachments: [{ mediaId: old.id }] } });
    const refused = await expectError(again, 422, "validation_failed");
    expect(refused.detail).toContain(old.id);

    // The run waiting for an approval still has its file, older than the retention as it is, and uses it when it goes on.
    expect(await status(kept.url)).toBe(200);
    const finished = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(finished.status).toBe("completed");
    const counted = finished.output.find((i) => i.type === "tool_result") as { output: { exitCode: number; stdout: string } };
    expect(counted.output).toMatchObject({ exitCode: 0, stdout: "19\n" });

    // Finished, it is kept for the retention after its last use, then goes too.
    await waitUntil(async () => (await status(kept.url)) === 404 || null, 60_000, "the finished run's file to be deleted");

    // The same bytes attached again are stored anew, under a new id.
    const back = await echoFile("old.png", PNG);
    const stored = fileOf(back);
    expect(stored.id).not.toBe(old.id);
    const res = await app.api(stored.url, { key: alice.apiKey });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).toString("base64")).toBe(PNG);
  });
});
