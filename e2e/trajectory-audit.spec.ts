import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { bearer, DEMO_OPERATOR, demoCredentials, screenshot, startEchoRun, startScript, uniqueMarker } from "./support";

type TLine = { responseId: string; seq: number; type: string; actorUserId: string | null; transport: string | null; createdAt: string; data: Record<string, unknown> };

test("filter a trajectory by type, actor and text, and export what is shown as JSONL", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);
  const decided = await request.post(`/v1/approvals/${run.approvalId}`, { headers: bearer(creds.apiKey), data: { decision: "approve" } });
  expect(((await decided.json()) as { status: string }).status).toBe("completed");

  await page.goto(`/responses/${run.responseId}`);
  const events = page.getByTestId("trajectory-event");
  await expect(events.first()).toBeVisible();
  const all = await events.count();
  expect(all).toBeGreaterThan(8);

  // Type filter: approvals only.
  await page.getByTestId("trajectory-categories").getByRole("button", { name: "Approvals" }).click();
  await expect(events).toHaveCount(2);
  await expect(events.nth(0)).toHaveAttribute("data-type", "approval.requested");
  await expect(events.nth(1)).toHaveAttribute("data-type", "approval.resolved");
  await expect(events.nth(1)).toContainText(`Approval approved by ${DEMO_OPERATOR} via http`);
  await screenshot(page, "trajectory-filtered");

  // Export with the same filter: a download of JSONL lines, one event each.
  const download = page.waitForEvent("download");
  await page.getByTestId("export-jsonl").click();
  const file = await (await download).path();
  const text = readFileSync(file, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l) as TLine);
  expect(lines.map((l) => l.type)).toEqual(["approval.requested", "approval.resolved"]);
  expect(lines.every((l) => l.responseId === run.responseId && typeof l.seq === "number" && !Number.isNaN(Date.parse(l.createdAt)))).toBe(true);
  expect(lines[1]?.transport).toBe("http");
  expect(lines[1]?.data).toMatchObject({ approvalId: run.approvalId, decision: "approve" });

  // Actor filter (the decider), then a server-side text search across types and data.
  await page.getByTestId("trajectory-categories").getByRole("button", { name: "Approvals" }).click();
  await page.getByTestId("trajectory-actor").selectOption({ label: DEMO_OPERATOR });
  await expect(events.filter({ hasText: "approval.resolved" })).toHaveCount(1);
  await expect(events.filter({ hasText: "response.text.delta" })).toHaveCount(0);
  await page.getByTestId("trajectory-actor").selectOption({ label: "Everyone" });
  await page.getByTestId("trajectory-search").fill(marker);
  await expect(events.filter({ hasText: "response.tool_call" })).toHaveCount(1);
  await expect(events.filter({ hasText: "response.tool_result" })).toHaveCount(1);
  await expect(events.filter({ hasText: "harness.attempt.phase" })).toHaveCount(0);

  // The whole (unfiltered) trajectory exports too: every event, in order.
  await page.getByTestId("trajectory-search").fill("");
  await expect(events.first()).toBeVisible();
  const res = await page.request.get(`/api/export/trajectory?responseId=${run.responseId}`);
  expect(res.status()).toBe(200);
  const every = (await res.text()).trimEnd().split("\n").map((l) => JSON.parse(l) as TLine);
  expect(every.map((l) => l.seq)).toEqual(every.map((_, i) => i));
  expect(every.map((l) => l.type)).toEqual(expect.arrayContaining(["response.created", "approval.requested", "approval.resolved", "response.tool_result", "harness.attempt.phase", "response.completed"]));
});

test("a long trajectory stays a short DOM: pages load while scrolling, only visible rows render", async ({ page, request }) => {
  test.setTimeout(120_000);
  const creds = await demoCredentials();
  // 60 turns × 16 echo calls: a few thousand events in one response.
  const turn = (i: number) => ({ text: `turn ${i}`, toolCalls: Array.from({ length: 16 }, (_, j) => ({ name: "echo", arguments: { text: `t${i}-${j}` } })), usage: { outputTokens: 3 } });
  const run = await startScript(request, creds.apiKey, { script: [...Array.from({ length: 60 }, (_, i) => turn(i)), { text: "done" }] });
  expect(run.status).toBe("completed");

  await page.goto(`/responses/${run.id}`);
  const status = page.getByTestId("trajectory-status");
  await expect(status).toContainText("500 events loaded so far");
  const rendered = await page.getByTestId("trajectory-event").count();
  expect(rendered).toBeLessThan(100);

  // Scroll to the end: further pages load as the end comes near, until everything is there.
  const scroller = page.getByTestId("trajectory");
  await expect(async () => {
    await scroller.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await expect(status).not.toContainText("loaded so far", { timeout: 500 });
  }).toPass({ timeout: 30_000 });
  const total = Number((await status.textContent())?.match(/([\d,]+) events/)?.[1]?.replace(/,/g, ""));
  expect(total).toBeGreaterThan(2000);
  expect(await page.getByTestId("trajectory-event").count()).toBeLessThan(100);
  await expect(async () => {
    await scroller.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await expect(page.getByTestId("trajectory-event").last()).toHaveAttribute("data-seq", String(total - 1), { timeout: 500 });
  }).toPass({ timeout: 10_000 });

  await page.getByTestId("trajectory-audit").scrollIntoViewIfNeeded();
  await page.getByTestId("trajectory-audit").screenshot({ path: "e2e/screenshots/trajectory-long.png" });

  // Search stays on the server: one match among thousands.
  await page.getByTestId("trajectory-search").fill("t42-7");
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "response.tool_call" })).toHaveCount(1);
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "response.completed" })).toContainText("Boundary: completed");
});
