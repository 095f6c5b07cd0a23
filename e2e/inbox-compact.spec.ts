import { expect, type Page, test } from "@playwright/test";
import { bearer, completedToolResult, DEMO_OPERATOR, demoCredentials, screenshot, startEchoRun, uniqueMarker } from "./support";

const rowOf = (page: Page, approvalId: string) => page.locator(`[data-testid="inbox-row"][data-approval-id="${approvalId}"]`);
const cardOf = (page: Page, approvalId: string) => page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
const decidedRow = (page: Page, approvalId: string) => page.locator(`[data-testid="decided-approval"][data-approval-id="${approvalId}"]`);

/** Selects a request by clicking its line; keyboard focus is then on that line, not in a field. */
async function pick(page: Page, approvalId: string): Promise<void> {
  await rowOf(page, approvalId).locator(".inbox-row-main").click();
  await expect(rowOf(page, approvalId)).toHaveAttribute("data-selected", "true");
  await expect(cardOf(page, approvalId)).toBeVisible();
}

test("a 1280×800 screen shows at least 15 requests, one line each, beside the selected one in full", async ({ page, request }) => {
  const creds = await demoCredentials();
  const markers = Array.from({ length: 16 }, () => uniqueMarker());
  const runs = [];
  for (const marker of markers) runs.push(await startEchoRun(request, creds.apiKey, marker));

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/approvals");
  await expect(page.getByTestId("inbox-row")).not.toHaveCount(0);
  await expect(rowOf(page, runs[15]?.approvalId as string)).toBeAttached();
  // Count the lines wholly on screen without scrolling anything.
  const onScreen = await page.getByTestId("inbox-row").evaluateAll((rows) =>
    rows.filter((r) => {
      const box = r.getBoundingClientRect();
      return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight && box.left >= 0 && box.right <= window.innerWidth;
    }).length,
  );
  expect(onScreen, "inbox lines on a 1280×800 screen").toBeGreaterThanOrEqual(15);
  // One line: risk, tool, the operation, requester and agent, age, expiry.
  const first = runs[0]?.approvalId as string;
  const line = rowOf(page, first);
  await expect(line.locator(".badge")).toHaveText("medium");
  await expect(line).toContainText("tool:exec");
  await expect(line).toContainText(`echo ${markers[0]}`);
  await expect(line).toContainText(`${DEMO_OPERATOR} · scripted`);
  await expect(line.locator(".inbox-row-age time")).toBeVisible();
  await expect(line).toContainText(/expires in/);
  const box = await line.boundingBox();
  expect(box?.height ?? 0, "one line per request").toBeLessThan(40);
  // The detail pane shows the selected request in full, with its decision bar on screen.
  await pick(page, first);
  await expect(cardOf(page, first).getByTestId("arguments")).toContainText(`echo ${markers[0]}`);
  await expect(cardOf(page, first).getByRole("button", { name: "Approve", exact: true })).toBeInViewport();
  await screenshot(page, "inbox-compact", { viewport: true });

  for (const run of runs) expect((await request.post(`/v1/responses/${run.responseId}/cancel`, { headers: bearer(creds.apiKey) })).status()).toBe(200);
});

test("every shortcut works: j/k move, ? help, e/r/g open a focused field (a grant still needs its button and confirmation), a approves, d denies", async ({ page, request }) => {
  const creds = await demoCredentials();
  const a = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const b = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const c = await startEchoRun(request, creds.apiKey, uniqueMarker());

  await page.goto(`/approvals?focus=${a.approvalId}`);
  await expect(rowOf(page, a.approvalId)).toHaveAttribute("data-selected", "true");
  await expect(page.getByTestId("shortcut-hint")).toContainText("e edit · r reply · g grant");
  await pick(page, a.approvalId);

  // j/k: the next line, then back.
  const ids = await page.getByTestId("inbox-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-approval-id")));
  const next = ids[ids.indexOf(a.approvalId) + 1] as string;
  expect(next).toBeTruthy();
  await page.keyboard.press("j");
  await expect(rowOf(page, next)).toHaveAttribute("data-selected", "true");
  await expect(rowOf(page, a.approvalId)).toHaveAttribute("data-selected", "false");
  await expect(cardOf(page, next)).toBeVisible();
  await page.keyboard.press("k");
  await expect(rowOf(page, a.approvalId)).toHaveAttribute("data-selected", "true");

  // ?: help lists every shortcut.
  await page.keyboard.press("?");
  const help = page.getByTestId("shortcuts-help");
  await expect(help).toBeVisible();
  await expect(help).toContainText("Edit the arguments");
  await expect(help).toContainText("Reply instead");
  await expect(help).toContainText("Standing grant");
  await page.keyboard.press("?");
  await expect(help).toHaveCount(0);

  // e: the edit form's first field has focus (the key itself is not typed into it).
  const card = cardOf(page, a.approvalId);
  await page.keyboard.press("e");
  await expect(card.getByTestId("arg-field-command")).toBeFocused();
  await expect(card.getByTestId("arg-field-command")).toHaveValue(/^echo e2e-/);

  // r: the reply field.
  await pick(page, a.approvalId);
  await page.keyboard.press("r");
  await expect(card.getByTestId("reply-message")).toBeFocused();

  // g: the grant's days field; Enter there chooses nothing, and the grant button still asks first.
  await pick(page, a.approvalId);
  await page.keyboard.press("g");
  await expect(card.getByTestId("grant-days-input")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("confirm-grant")).toHaveCount(0);
  await expect(rowOf(page, a.approvalId)).toBeVisible();
  await card.getByTestId("grant-days").click();
  const confirm = page.getByTestId("confirm-grant");
  await expect(confirm.getByTestId("grant-scope")).toContainText("Allow tool:exec with exactly these arguments for 1 day.");
  await expect(confirm.getByRole("button", { name: "Cancel" })).toBeFocused();
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(rowOf(page, a.approvalId)).toBeVisible();

  // a approves the selected request; d denies the next one picked.
  await pick(page, a.approvalId);
  await page.keyboard.press("a");
  await expect(rowOf(page, a.approvalId)).toHaveCount(0);
  await expect(decidedRow(page, a.approvalId).getByTestId("status")).toHaveText("approved");
  await expect(decidedRow(page, a.approvalId).getByTestId("decided-grant")).toHaveCount(0);
  await pick(page, b.approvalId);
  await page.keyboard.press("d");
  await expect(rowOf(page, b.approvalId)).toHaveCount(0);
  await expect(decidedRow(page, b.approvalId).getByTestId("status")).toHaveText("denied");

  expect((await request.post(`/v1/responses/${c.responseId}/cancel`, { headers: bearer(creds.apiKey) })).status()).toBe(200);
});

test("an edit made in the form generated from the tool's schema is shown as a diff and is what runs", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  await page.goto(`/approvals?focus=${run.approvalId}`);
  await pick(page, run.approvalId);
  const card = cardOf(page, run.approvalId);
  await page.keyboard.press("e");
  const form = card.getByTestId("arguments-form");
  // Fields from exec's argument schema: command (required), cwd and timeoutMs (optional).
  await expect(form.getByTestId("arg-field-command")).toHaveValue(`echo ${marker}`);
  await expect(form.getByTestId("arg-field-cwd")).toHaveValue("");
  await expect(form.getByTestId("arg-field-timeoutMs")).toHaveAttribute("type", "number");
  await expect(card.getByTestId("arguments-diff")).toHaveCount(0);

  await form.getByTestId("arg-field-command").fill(`echo edited-${marker}`);
  await form.getByTestId("arg-field-timeoutMs").fill("20000");
  const diff = card.getByTestId("arguments-diff");
  await expect(diff.locator('[data-testid="diff-row"][data-kind="changed"]')).toContainText(`command`);
  await expect(diff.locator('[data-testid="diff-row"][data-kind="changed"] del')).toHaveText(`echo ${marker}`);
  await expect(diff.locator('[data-testid="diff-row"][data-kind="changed"] ins')).toHaveText(`echo edited-${marker}`);
  await expect(diff.locator('[data-testid="diff-row"][data-kind="added"]')).toContainText("timeoutMs");
  // The raw JSON is the same state (the fallback editor).
  await expect(card.getByTestId("edit-arguments")).toHaveValue(new RegExp(`"command": "echo edited-${marker}"`));
  await screenshot(page, "inbox-edit-diff");

  await expect(card.getByTestId("approve-with-options")).toHaveText("Approve the edited call once");
  await card.getByTestId("approve-with-options").click();
  await expect(rowOf(page, run.approvalId)).toHaveCount(0);
  await expect(decidedRow(page, run.approvalId).getByTestId("decided-edited")).toContainText(`echo ${marker}`);

  // The API: the call that ran is the edited one.
  const output = (await completedToolResult(request, creds.apiKey, run, "exec")) as { stdout: string; exitCode: number };
  expect(output.exitCode).toBe(0);
  expect(output.stdout.trim()).toBe(`edited-${marker}`);
});
