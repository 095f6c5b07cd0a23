import { expect, type Locator, type Page, test } from "@playwright/test";
import { bearer, demoCredentials, screenshot, startEchoRun, startScript, uniqueMarker } from "./support";

/** Presses j until the selected line is `target` (j/k move the selection through the pending list). */
async function moveTo(page: Page, target: Locator, max = 40): Promise<void> {
  await page.keyboard.press("k");
  for (let i = 0; i < max; i++) {
    if ((await target.getAttribute("data-selected")) === "true") return;
    await page.keyboard.press("j");
  }
  await expect(target).toHaveAttribute("data-selected", "true");
}

const decidedRow = (page: Page, approvalId: string) => page.locator(`[data-testid="decided-approval"][data-approval-id="${approvalId}"]`);

test("triage by keyboard: j/k to move, a to approve, d to deny, high risk asks first, x + bulk for the rest", async ({ page, request }) => {
  const creds = await demoCredentials();
  const m1 = uniqueMarker();
  const m2 = uniqueMarker();
  const first = await startEchoRun(request, creds.apiKey, m1);
  const second = await startEchoRun(request, creds.apiKey, m2);
  const risky = await startScript(request, creds.apiKey, { script: [{ text: "Cleaning", toolCalls: [{ name: "exec", arguments: { command: "rm -rf ./build-output" } }] }, { text: "Cleaned." }] });
  expect(risky.requiredAction?.risk).toBe("high");
  const riskyId = risky.requiredAction?.id as string;

  await page.goto("/approvals");
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");
  await expect(page.getByTestId("shortcut-hint")).toContainText("j/k move · a approve · d deny · x select");
  const card = (id: string) => page.locator(`[data-testid="approval"][data-approval-id="${id}"]`);
  const row = (id: string) => page.locator(`[data-testid="inbox-row"][data-approval-id="${id}"]`);
  await expect(row(first.approvalId)).toBeVisible();

  // j/k select; the selected request shows in full, the keys on its buttons. `a` approves it.
  await moveTo(page, row(first.approvalId));
  await expect(card(first.approvalId).locator(".kbd")).toHaveCount(2);
  await screenshot(page, "inbox-keyboard");
  await page.keyboard.press("?");
  await expect(page.getByTestId("shortcuts-help")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("shortcuts-help")).toHaveCount(0);
  await page.keyboard.press("a");
  await expect(row(first.approvalId)).toHaveCount(0);
  await expect(card(first.approvalId)).toHaveCount(0);
  await expect(decidedRow(page, first.approvalId).getByTestId("status")).toHaveText("approved");
  await expect(decidedRow(page, first.approvalId)).toContainText("Demo Operator");
  await expect(decidedRow(page, first.approvalId)).toContainText("console");

  // `d` denies (the API takes no reason; the decided list shows who denied, when and how).
  await moveTo(page, row(second.approvalId));
  await page.keyboard.press("d");
  await expect(row(second.approvalId)).toHaveCount(0);
  const denied = decidedRow(page, second.approvalId);
  await expect(denied.getByTestId("status")).toHaveText("denied");
  await expect(denied).toContainText("Demo Operator");
  await expect(denied).toContainText("console");
  await expect(denied.locator("time")).toBeVisible();

  // High risk: `a` opens a confirmation; Escape keeps it pending; confirming approves it.
  await page.getByTestId("filter-risk").getByRole("button", { name: "high" }).click();
  await expect(row(riskyId)).toBeVisible();
  await expect(page.getByTestId("inbox-row").filter({ has: page.locator(".badge.risk-medium") })).toHaveCount(0);
  await moveTo(page, row(riskyId));
  await expect(card(riskyId).getByRole("checkbox")).toBeDisabled();
  await page.keyboard.press("a");
  const dialog = page.getByTestId("confirm-high-risk");
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("rm -rf ./build-output");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await screenshot(page, "inbox-high-risk-confirm");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(card(riskyId)).toBeVisible();
  await page.keyboard.press("a");
  await dialog.getByRole("button", { name: "Approve high-risk action" }).click();
  await expect(row(riskyId)).toHaveCount(0);
  await expect(decidedRow(page, riskyId).getByTestId("status")).toHaveText("approved");
  await page.getByTestId("filter-risk").getByRole("button", { name: "high" }).click();

  // Bulk: x selects low/medium items; one click decides them all.
  const b1 = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const b2 = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await expect(row(b2.approvalId)).toBeVisible();
  await moveTo(page, row(b1.approvalId));
  await page.keyboard.press("x");
  await moveTo(page, row(b2.approvalId));
  await page.keyboard.press("x");
  await expect(page.getByTestId("bulk-bar")).toContainText("2 selected");
  await screenshot(page, "inbox-bulk");
  await page.getByTestId("bulk-bar").getByRole("button", { name: "Approve selected" }).click();
  await expect(row(b1.approvalId)).toHaveCount(0);
  await expect(row(b2.approvalId)).toHaveCount(0);
  await expect(decidedRow(page, b1.approvalId).getByTestId("status")).toHaveText("approved");
  await expect(decidedRow(page, b2.approvalId).getByTestId("status")).toHaveText("approved");
});

test("the server refuses bulk decisions that include a high-risk item", async ({ page, request }) => {
  const creds = await demoCredentials();
  const low = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const risky = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command: "sudo reboot" } }] }, { text: "x" }] });
  await page.goto("/approvals");
  const items = await page.evaluate(
    async ([a, b]) => {
      const res = await fetch(`/api/trpc/inbox.list?input=${encodeURIComponent(JSON.stringify({ status: "pending", limit: 200 }))}`);
      const rows = ((await res.json()) as { result: { data: { rows: Array<{ id: string; bindingHash: string }> } } }).result.data.rows;
      return rows.filter((r) => r.id === a || r.id === b).map((r) => ({ approvalId: r.id, bindingHash: r.bindingHash }));
    },
    [low.approvalId, risky.requiredAction?.id as string],
  );
  expect(items).toHaveLength(2);
  const res = await page.request.post("/api/trpc/inbox.decideMany", { data: { decision: "approve", items }, headers: { origin: new URL(page.url()).origin } });
  expect(res.status()).toBe(403);
  expect(await res.text()).toContain("High-risk approvals cannot be decided in bulk");
  await expect(page.locator(`[data-testid="inbox-row"][data-approval-id="${low.approvalId}"]`)).toBeVisible();
  // Nothing was decided; leave nothing pending for the next tests.
  for (const id of [low.responseId, risky.id]) expect((await request.post(`/v1/responses/${id}/cancel`, { headers: bearer(creds.apiKey) })).status()).toBe(200);
});

test("reviewer verdicts: the rationale sits beside the command, the inbox filters on it, the trajectory records it", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const reviewed = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo ${marker}` } }] }, { text: "ok" }] }, { agent: "scripted-reviewed" });
  expect(reviewed.requiredAction?.type).toBe("human_approval");
  const plain = await startEchoRun(request, creds.apiKey, uniqueMarker());

  await page.goto(`/approvals?focus=${reviewed.requiredAction?.id}`);
  const card = page.locator(`[data-testid="approval"][data-approval-id="${reviewed.requiredAction?.id}"]`);
  await expect(card.getByTestId("reviewer-rationale")).toContainText("No reviewer is configured.");
  await page.getByTestId("filter-reviewer").selectOption("ask");
  await expect(card).toBeVisible();
  await expect(page.locator(`[data-testid="inbox-row"][data-approval-id="${plain.approvalId}"]`)).toHaveCount(0);
  await page.getByTestId("filter-agent").selectOption("scripted-reviewed");
  await expect(page.getByTestId("inbox-row").filter({ hasNotText: "scripted-reviewed" })).toHaveCount(0);
  await expect(card).toBeVisible();
  // Session context: the turns before the request.
  await card.getByTestId("session-context").locator("summary").click();
  await expect(card.getByTestId("session-context")).toContainText("Tool call");
  await expect(card.getByTestId("session-context")).toContainText(`echo ${marker}`);
  await screenshot(page, "inbox-reviewer");

  await page.goto(`/responses/${reviewed.id}`);
  await page.getByTestId("trajectory-categories").getByRole("button", { name: "Reviewer" }).click();
  await expect(page.getByTestId("trajectory-event")).toHaveCount(1);
  await expect(page.getByTestId("trajectory-event")).toContainText("Reviewer none: ask");
  for (const id of [reviewed.id, plain.responseId]) await request.post(`/v1/responses/${id}/cancel`, { headers: bearer(creds.apiKey) });
});
