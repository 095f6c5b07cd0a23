import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { mediaCount } from "../../db/repositories/media";
import { testDbKind } from "../../db/testing";
import { createMediaCapabilities } from "../../server/host/media";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { fakeModelAgent, startFakeModel, type TFakeModel, type TFakeRequest, textReply, toolReply } from "./fake-openai";
import { decide, expectError, invoke, ok200, rows, type TBody, tableCounts, workspaceOf } from "./helpers";
import { eventsOf } from "./runtime-helpers";

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
const b64 = (text: string) => Buffer.from(text).toString("base64");
const MAX_FILE = 64 * 1024;
const MAX_RUN = 160 * 1024;
const CONTEXT_CHARS = 2000;

let fake: TFakeModel;
let app: TTestApp;
let owner: TTestUser;
let other: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  fake = await startFakeModel();
  app = await startTestApp({ agents: [fakeModelAgent(fake.url, "fake-media")], media: { maxFileBytes: MAX_FILE, maxRunBytes: MAX_RUN, contextChars: CONTEXT_CHARS } });
  owner = await app.user("operator");
  other = await app.user("member");
  auditor = await app.user("auditor");
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

type TContentPart = { type: string; text?: string; image_url?: { url: string } };
/** The user message's parts as the model endpoint received them. */
const userParts = (request: TFakeRequest): TContentPart[] => {
  const user = request.body.messages.find((m) => m.role === "user");
  expect(Array.isArray(user?.content), JSON.stringify(user)).toBe(true);
  return user?.content as TContentPart[];
};

const attachmentItems = (env: TBody) => env.output.filter((i) => i.type === "attachment") as Array<{ id: string; name: string; mediaType: string; size: number; url: string }>;
const failureItems = (env: TBody) => env.output.filter((i) => i.type === "attachment_failure") as Array<{ path: string; reason: string; message: string }>;

/** A completed scripted run in a fresh session whose workspace the test fills, then a run attaching `paths`. */
async function replyWith(files: (workspace: string) => void, paths: string[]): Promise<TBody> {
  const first = await invoke(app, owner.apiKey, "hello");
  files(workspaceOf(app, first.sessionId));
  return invoke(app, owner.apiKey, { script: [{ text: "Here is the report.", replyAttachments: paths }] }, { sessionId: first.sessionId });
}

describe(`attachments (${testDbKind()})`, () => {
  test("a PNG and a text file reach the model as an image part and bounded text; a resumed run sends them again", async () => {
    const big = "x".repeat(CONTEXT_CHARS * 2);
    fake.reply(toolReply([{ name: "exec", arguments: JSON.stringify({ command: "ls attachments" }) }]), textReply(["Seen."]));
    const mark = fake.requests.length;
    const env = await invoke(app, owner.apiKey, "What is in these files?", {
      agent: "fake-media",
      attachments: [
        { name: "shot.png", mediaType: "image/png", data: PNG },
        { name: "notes.txt", mediaType: "text/plain; charset=utf-8", data: b64("The deploy key rotates on Fridays.") },
        { name: "big.csv", mediaType: "text/csv", data: b64(big) },
      ],
    });
    expect(env.status).toBe("requires_action");
    const first = fake.requests[mark] as TFakeRequest;
    const parts = userParts(first);
    expect(parts[0]).toEqual({ type: "text", text: "What is in these files?" });
    const text = parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    expect(text).toContain("The deploy key rotates on Fridays.");
    expect(text).toContain("staged at attachments/notes.txt");
    // The CSV does not fit the budget: a labelled fact, never the content.
    expect(text).toMatch(/"big\.csv" \(text\/csv, [^)]*\): not included/);
    expect(text).not.toContain(big.slice(0, 100));
    expect(text.length).toBeLessThan(CONTEXT_CHARS + 200);
    expect(parts.filter((p) => p.type === "image_url").map((p) => p.image_url?.url)).toEqual([`data:image/png;base64,${PNG}`]);

    // The facts are on the run and in the trajectory; the bytes are in neither.
    const [admitted] = await eventsOf(app, env.id, "attachments.admitted");
    const facts = ((admitted as { data: unknown }).data as { attachments: Array<Record<string, unknown>> }).attachments;
    expect(facts.map((f) => [f.name, f.mediaType, f.size])).toEqual([
      ["shot.png", "image/png", Buffer.from(PNG, "base64").length],
      ["notes.txt", "text/plain", 34],
      ["big.csv", "text/csv", big.length],
    ]);
    for (const f of facts) expect(Object.keys(f).sort()).toEqual(["id", "mediaType", "name", "sha256", "size"]);
    const leaked = await rows(app, `select count(*) as n from response_events where response_id = '${env.id}' and data::text like '%${PNG.slice(0, 40)}%'`);
    expect(Number(leaked[0]?.n)).toBe(0);

    const approval = env.requiredAction as { id: string };
    const done = await ok200(await decide(app, owner.apiKey, approval.id, "approve"));
    expect(done.status).toBe("completed");
    const resumed = fake.requests[mark + 1] as TFakeRequest;
    expect(userParts(resumed)).toEqual(parts);
    // The staged files are there for the approved command.
    const ls = done.output.find((i) => i.type === "tool_result") as { output: { stdout: string } };
    expect(ls.output.stdout.split("\n").filter(Boolean).sort()).toEqual(["big.csv", "notes.txt", "shot.png"]);
  });

  test("staged files are readable by an approved exec, and a stored mediaId can be attached again", async () => {
    const env = await invoke(app, owner.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command: "cat attachments/notes.txt && wc -c < attachments/shot.png" } }] }, { text: "Read." }] }, {
      attachments: [
        { name: "notes.txt", mediaType: "text/plain", data: b64("staged for exec\n") },
        { name: "shot.png", mediaType: "image/png", data: PNG },
      ],
    });
    expect(env.status).toBe("requires_action");
    const done = await ok200(await decide(app, owner.apiKey, (env.requiredAction as { id: string }).id, "approve"));
    const result = done.output.find((i) => i.type === "tool_result") as { output: { exitCode: number; stdout: string } };
    expect(result.output.exitCode).toBe(0);
    expect(result.output.stdout).toBe(`staged for exec\n${Buffer.from(PNG, "base64").length}\n`);

    // The same bytes are stored once per owner; the id can be attached to a later run.
    const [admitted] = await eventsOf(app, env.id, "attachments.admitted");
    const pngId = ((admitted as { data: unknown }).data as { attachments: Array<{ id: string; name: string }> }).attachments.find((a) => a.name === "shot.png")?.id as string;
    const before = await mediaCount(app.deps.db);
    const again = await invoke(app, owner.apiKey, { script: [{ text: "ok" }] }, { attachments: [{ mediaId: pngId, name: "again.png" }, { name: "copy.png", mediaType: "image/png", data: PNG }] });
    expect(again.status).toBe("completed");
    expect(await mediaCount(app.deps.db)).toBe(before);
    // Another user's media id is refused exactly like an unknown one.
    const foreign = await expectError(await app.api("/v1/responses", { key: other.apiKey, body: { input: "hi", attachments: [{ mediaId: pngId }] } }), 422, "validation_failed");
    const unknown = await expectError(await app.api("/v1/responses", { key: other.apiKey, body: { input: "hi", attachments: [{ mediaId: "media_nope" }] } }), 422, "validation_failed");
    expect(foreign.detail.replace(pngId, "ID")).toBe(unknown.detail.replace("media_nope", "ID"));
  });

  test("reply attachments from the workspace download for the owner and an auditor, 404 for another member", async () => {
    const env = await replyWith(
      (ws) => {
        writeFileSync(join(ws, "report.txt"), "All green.\n");
        mkdirSync(join(ws, "out"));
        writeFileSync(join(ws, "out", "chart.png"), Buffer.from(PNG, "base64"));
        writeFileSync(join(ws, "page.svg"), SVG);
      },
      ["report.txt", "out/chart.png", "page.svg"],
    );
    expect(env.status).toBe("completed");
    // The assistant's text is exactly what it said.
    expect(env.outputText).toBe("Here is the report.");
    const items = attachmentItems(env);
    expect(items.map((i) => [i.name, i.mediaType, i.size])).toEqual([
      ["report.txt", "text/plain", 11],
      ["chart.png", "image/png", Buffer.from(PNG, "base64").length],
      ["page.svg", "image/svg+xml", SVG.length],
    ]);
    const [report, chart, svg] = items as [(typeof items)[0], (typeof items)[0], (typeof items)[0]];
    expect(report.url).toBe(`/v1/responses/${env.id}/attachments/${report.id}`);

    for (const reader of [owner, auditor]) {
      const res = await app.api(report.url, { key: reader.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain");
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="report.txt"; filename*=UTF-8''report.txt`);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await res.text()).toBe("All green.\n");
    }
    const image = await app.api(`${chart.url}?sessionId=${env.sessionId}`, { key: owner.apiKey });
    expect(image.headers.get("content-disposition")).toMatch(/^inline;/);
    expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(PNG);
    // SVG is never rendered inline.
    const svgRes = await app.api(svg.url, { key: owner.apiKey });
    expect(svgRes.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(svgRes.headers.get("content-security-policy")).toContain("sandbox");

    await expectError(await app.api(report.url, { key: other.apiKey }), 404, "not_found");
    await expectError(await app.api(`/v1/responses/${env.id}/attachments/media_unknown`, { key: owner.apiKey }), 404, "not_found");
    await expectError(await app.api(`${report.url}?sessionId=sess_other`, { key: owner.apiKey }), 404, "not_found");
    // An input attachment of another response is not this response's file.
    const given = await invoke(app, owner.apiKey, "see this", { attachments: [{ name: "given.txt", mediaType: "text/plain", data: b64("given") }] });
    const [admitted] = await eventsOf(app, given.id, "attachments.admitted");
    const givenId = ((admitted as { data: unknown }).data as { attachments: Array<{ id: string }> }).attachments[0]?.id as string;
    await expectError(await app.api(`/v1/responses/${env.id}/attachments/${givenId}`, { key: owner.apiKey }), 404, "not_found");
    // …but it is its own response's file, for the same readers.
    const own = await app.api(`/v1/responses/${given.id}/attachments/${givenId}`, { key: auditor.apiKey });
    expect(await own.text()).toBe("given");
  });

  test("outside paths, a symlink out, a missing and an oversized file give their notices and store nothing", async () => {
    const before = await mediaCount(app.deps.db);
    const env = await replyWith(
      (ws) => {
        writeFileSync(join(ws, "big.bin"), Buffer.alloc(MAX_FILE + 1));
        symlinkSync("/etc/hostname", join(ws, "link.txt"));
        mkdirSync(join(ws, "dir"));
      },
      ["../../../etc/hostname", "/etc/hostname", "link.txt", "big.bin", "nothing.txt", "dir"],
    );
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("Here is the report.");
    expect(attachmentItems(env)).toEqual([]);
    expect(failureItems(env).map((f) => [f.path, f.reason])).toEqual([
      ["../../../etc/hostname", "outside_workspace"],
      ["/etc/hostname", "outside_workspace"],
      ["link.txt", "outside_workspace"],
      ["big.bin", "too_large"],
      ["nothing.txt", "missing"],
      ["dir", "denied"],
    ]);
    expect(failureItems(env)[0]?.message).toBe('"../../../etc/hostname" is outside the workspace; only files inside it can be attached.');
    expect(failureItems(env)[3]?.message).toBe('"big.bin" is larger than the 64.0 KiB limit for an attachment.');
    // No server path in what clients see.
    expect(JSON.stringify(env)).not.toContain(app.dataDir);
    expect((await eventsOf(app, env.id, "attachment.failed")).length).toBe(6);
    expect(await mediaCount(app.deps.db)).toBe(before);
  });

  test("a cancelled preparation and a revoked authority give their notice and store nothing", async () => {
    const before = await mediaCount(app.deps.db);
    const env = await invoke(app, owner.apiKey, "hello");
    const workspace = workspaceOf(app, env.sessionId);
    writeFileSync(join(workspace, "a.txt"), "a");
    const controller = new AbortController();
    let published = 0;
    const caps = createMediaCapabilities({
      db: app.deps.db,
      policy: app.deps.config.media,
      ownerId: owner.userId,
      workspaceDir: workspace,
      attachments: [],
      runAs: null,
      isCurrent: () => true,
      signal: controller.signal,
      publish: async (write) => {
        published++;
        return write(app.deps.db);
      },
    });
    // A remote reader that is still transferring when the preparation is cancelled: the cancel comes
    // once the read has started (not after a fixed delay, which a slow machine could outrun or not reach).
    let reading = () => {};
    const started = new Promise<void>((resolve) => {
      reading = resolve;
    });
    const slowReader = (_path: string, { signal }: { maxBytes: number; signal: AbortSignal }) =>
      new Promise<Uint8Array>((_, reject) => {
        signal.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })), { once: true });
        reading();
      });
    const pending = caps.prepareReplyMedia({ kind: "attempt", attempt: { paths: ["remote/report.pdf", "a.txt"] }, readWorkspaceFile: slowReader });
    await started;
    controller.abort();
    const cancelled = await pending;
    expect(cancelled.kind === "attempt" && cancelled.preparedMedia).toEqual({
      attachments: [],
      failures: [
        { path: "remote/report.pdf", reason: "cancelled", message: 'Attaching "remote/report.pdf" was cancelled.' },
        { path: "a.txt", reason: "cancelled", message: 'Attaching "a.txt" was cancelled.' },
      ],
    });
    // The harness's own authority ends after the read: checked again right before the write.
    let current = true;
    const live = createMediaCapabilities({ db: app.deps.db, policy: app.deps.config.media, ownerId: owner.userId, workspaceDir: workspace, attachments: [], runAs: null, isCurrent: () => true, signal: new AbortController().signal, publish: (write) => write(app.deps.db) });
    const revoked = await live.prepareReplyMedia({
      kind: "attempt",
      attempt: { paths: ["a.txt"] },
      assertCurrent: () => current,
      readWorkspaceFile: async () => {
        current = false;
        return new Uint8Array([97]);
      },
    });
    expect(revoked.kind === "attempt" && revoked.preparedMedia.failures.map((f) => f.reason)).toEqual(["revoked"]);
    // A remote workspace's absolute paths map into it; others are outside even if the file exists here.
    const remote = await live.prepareReplyMedia({ kind: "payload", payload: { text: "see", paths: ["/remote/ws/a.txt", join(workspace, "a.txt")] }, workspaceRoot: "/remote/ws", readWorkspaceFile: async () => new Uint8Array(2_000_000) });
    expect(remote.kind === "payload" && remote.payload.media.failures.map((f) => [f.path, f.reason])).toEqual([
      ["/remote/ws/a.txt", "too_large"],
      [join(workspace, "a.txt"), "outside_workspace"],
    ]);
    expect(published).toBe(0);
    expect(await mediaCount(app.deps.db)).toBe(before);
  });

  test("limits: 413 past the body, file or run limit, 415 for a type outside the allowlist, 422 for bad data; nothing written", async () => {
    const counts = await tableCounts(app);
    const media = await mediaCount(app.deps.db);
    // A 10 MB base64 body: refused while reading, before any parse.
    const huge = JSON.stringify({ input: "hi", attachments: [{ name: "big.png", mediaType: "image/png", data: "A".repeat(10_000_000) }] });
    await expectError(await app.api("/v1/responses", { key: owner.apiKey, rawBody: huge, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    const file = await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: [{ name: "a.txt", mediaType: "text/plain", data: b64("a".repeat(MAX_FILE + 1)) }] } }), 413, "payload_too_large");
    expect(file.detail).toBe('attachments[0] "a.txt" is 64.0 KiB, over the 64.0 KiB limit for one attachment.');
    const three = [1, 2, 3].map((n) => ({ name: `${n}.txt`, mediaType: "text/plain", data: b64(String(n).repeat(60 * 1024)) }));
    const run = await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: three } }), 413, "payload_too_large");
    expect(run.detail).toBe("The attachments total 180.0 KiB, over the 160.0 KiB limit for one run.");
    const type = await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: [{ name: "run.exe", mediaType: "application/x-msdownload", data: b64("MZ") }] } }), 415, "unsupported_media_type");
    expect(type.detail).toContain("application/x-msdownload is not an admitted attachment type (admitted: image/png, image/jpeg");
    await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: [{ name: "fake.png", mediaType: "image/png", data: b64("not a png") }] } }), 422, "validation_failed");
    await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: [{ name: "a.txt", mediaType: "text/plain", data: "%%%" }] } }), 422, "validation_failed");
    await expectError(await app.api("/v1/responses", { key: owner.apiKey, body: { input: "hi", attachments: [{ name: "../a.txt", mediaType: "text/plain", data: b64("a") }] } }), 400, "invalid_request");
    expect(await tableCounts(app)).toEqual(counts);
    expect(await mediaCount(app.deps.db)).toBe(media);
  });

  test("WebSocket response.create and AG-UI take attachments too", async () => {
    const ws = new WebSocket(`${app.url.replace("http", "ws")}/v1/live`, { headers: { authorization: `Bearer ${owner.apiKey}` } });
    const frames: Array<Record<string, unknown>> = [];
    ws.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise((r) => ws.once("open", r));
    ws.send(JSON.stringify({ type: "connect" }));
    ws.send(JSON.stringify({ type: "response.create", input: { script: [{ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" }] }, attachments: [{ name: "n.md", mediaType: "text/markdown", data: b64("# hi") }] }));
    const deadline = Date.now() + 30_000;
    while (!frames.some((f) => f.type === "response.completed") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    const completed = frames.find((f) => f.type === "response.completed") as { responseId: string };
    expect(completed).toBeDefined();
    const [wsFacts] = await eventsOf(app, completed.responseId, "attachments.admitted");
    expect(((wsFacts as { data: unknown }).data as { attachments: Array<{ name: string }> }).attachments.map((a) => a.name)).toEqual(["n.md"]);

    const agui = await app.api("/v1/agui", {
      key: owner.apiKey,
      body: { threadId: `thread-${Date.now()}`, runId: "run-1", state: {}, messages: [{ id: "m1", role: "user", content: "hello" }], tools: [], context: [], forwardedProps: { attachments: [{ name: "d.json", mediaType: "application/json", data: b64("{}") }] } },
    });
    expect(agui.status).toBe(200);
    const text = await agui.text();
    const finished = /"type":"RUN_FINISHED"/.test(text);
    expect(finished, text.slice(0, 500)).toBe(true);
    const [latest] = await rows<{ attachments: Array<{ name: string }> }>(app, `select attachments from responses where user_id = '${owner.userId}' order by created_at desc limit 1`);
    expect(latest?.attachments.map((a) => a.name)).toEqual(["d.json"]);
    const refused = await app.api("/v1/agui", {
      key: owner.apiKey,
      body: { threadId: `thread-${Date.now()}`, runId: "run-2", state: {}, messages: [{ id: "m1", role: "user", content: "hello" }], tools: [], context: [], forwardedProps: { attachments: [{ name: "x.bin", mediaType: "application/octet-stream", data: b64("x") }] } },
    });
    await expectError(refused, 415, "unsupported_media_type");
  });
});
