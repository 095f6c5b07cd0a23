import { expect, type Page, test } from "@playwright/test";
import { addUser, bearer, DEMO_OPERATOR, demoCredentials, openApproval, personText, screenshot, signedInPage, startEchoRun, uniqueMarker } from "./support";

const cardOf = (page: Page, approvalId: string) => page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
const settledOf = (page: Page, approvalId: string) => page.locator(`[data-testid="approval-settled"][data-approval-id="${approvalId}"]`);
const noteOf = (page: Page, approvalId: string) => page.locator(`[data-testid="decision-note"][data-approval-id="${approvalId}"]`);
const decidedRow = (page: Page, approvalId: string) => page.locator(`[data-testid="decided-approval"][data-approval-id="${approvalId}"]`);

/** The test id of the focused element (or its tag when it has none). */
const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.tagName ?? null);

/** Presses `key` until the element with `testId` has focus (at most `max` times). */
async function pressUntilFocused(page: Page, key: string, testId: string, max = 12): Promise<void> {
  for (let i = 0; i < max && (await focused(page)) !== testId; i++) await page.keyboard.press(key);
  expect(await focused(page)).toBe(testId);
}

test("a standing grant is never chosen by focus: Tab and Enter approve once; a grant is its own button with a confirmation naming its scope", async ({ page, request }) => {
  const creds = await demoCredentials();
  const grantsOf = async (approvalId: string) => {
    const res = await request.get("/v1/grants?status=all", { headers: bearer(creds.apiKey) });
    return ((await res.json()) as { grants: Array<{ approvalId: string; scope: string; expiresAt: string | null }> }).grants.filter((g) => g.approvalId === approvalId);
  };

  const once = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await page.goto("/approvals");
  const card = await openApproval(page, once.approvalId);
  await card.getByText("More options: edit, reply instead, standing grant").click();
  // Nothing is chosen up front, and the plain approve says it approves once.
  await expect(card.getByTestId("approve-with-options")).toHaveText("Approve once");
  await expect(card.getByRole("radio")).toHaveCount(0);

  // Enter in the days field does nothing; tabbing past it selects nothing.
  await card.getByTestId("grant-days-input").fill("3");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("confirm-grant")).toBeHidden();
  await page.keyboard.press("Tab");
  expect(await focused(page)).toBe("grant-days");
  // Enter on the grant button itself only opens its confirmation, with focus on Cancel.
  await page.keyboard.press("Enter");
  const dialog = page.getByTestId("confirm-grant");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expect(card).toBeVisible();

  // Every field by keyboard, the days field included, then back to Approve once: Enter approves without a grant.
  await card.getByTestId("edit-arguments").focus();
  await pressUntilFocused(page, "Tab", "grant-days-input");
  await page.keyboard.press("Tab");
  await pressUntilFocused(page, "Shift+Tab", "approve-with-options");
  await page.keyboard.press("Enter");
  await expect(card).toHaveCount(0);
  await expect(noteOf(page, once.approvalId)).toContainText("You approved tool:exec");
  await expect(noteOf(page, once.approvalId)).not.toContainText("without asking");
  await expect(decidedRow(page, once.approvalId).getByTestId("status")).toHaveText("approved");
  await expect(decidedRow(page, once.approvalId).getByTestId("decided-grant")).toHaveCount(0);
  expect(await grantsOf(once.approvalId)).toEqual([]);

  // A grant: its own button, then a confirmation stating exactly what it allows; Escape keeps the request pending.
  const granted = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const second = await openApproval(page, granted.approvalId);
  await second.getByText("More options: edit, reply instead, standing grant").click();
  await second.getByTestId("grant-days-input").fill("3");
  await second.getByTestId("grant-days").click();
  await expect(dialog.getByTestId("grant-scope")).toContainText("Allow tool:exec with exactly these arguments for 3 days.");
  await expect(dialog.getByTestId("grant-scope")).toContainText("Any other arguments still ask.");
  await screenshot(page, "grant-confirm");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(second).toBeVisible();
  expect(await grantsOf(granted.approvalId)).toEqual([]);
  await second.getByTestId("grant-days").click();
  await dialog.getByRole("button", { name: "Approve and allow for 3 days" }).click();
  await expect(second).toHaveCount(0);
  await expect(noteOf(page, granted.approvalId)).toContainText("It now runs without asking for 3 days.");
  await expect(decidedRow(page, granted.approvalId).getByTestId("decided-grant")).toBeVisible();
  const [grant] = await grantsOf(granted.approvalId);
  expect(grant?.scope).toBe("days");
  expect(new Date(grant?.expiresAt as string).getTime() - Date.now()).toBeGreaterThan(2.9 * 86_400_000);
});

test("two people decide the same approval at once: each sees the true outcome, and the loser sees who decided, how and when", async ({ browser, baseURL, page, request }) => {
  const creds = await demoCredentials();
  const olga = addUser("Olga Operator", "operator");
  const run = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const other = await signedInPage(browser, baseURL, olga);
  for (const p of [page, other]) {
    await p.goto("/approvals");
    await expect(p.getByTestId("live-indicator")).toHaveText("Live");
    await openApproval(p, run.approvalId);
  }

  // Hold both decisions until both are on their way, then let them race.
  let arrived = 0;
  let release = () => {};
  const bothSent = new Promise<void>((resolve) => {
    release = resolve;
  });
  for (const p of [page, other]) {
    await p.route("**/api/trpc/approvals.decide*", async (route) => {
      arrived += 1;
      if (arrived === 2) release();
      await bothSent;
      await route.continue();
    });
  }
  await Promise.all([cardOf(page, run.approvalId).getByRole("button", { name: "Approve", exact: true }).click(), cardOf(other, run.approvalId).getByRole("button", { name: "Deny", exact: true }).click()]);

  const statusOf = async () => ((await (await request.get(`/v1/responses/${run.responseId}?sessionId=${run.sessionId}`, { headers: bearer(creds.apiKey) })).json()) as { status: string }).status;
  await expect.poll(statusOf).toMatch(/^(completed|denied)$/);
  const approved = (await statusOf()) === "completed";
  const [winner, loser] = approved ? [page, other] : [other, page];
  await expect(noteOf(winner, run.approvalId)).toContainText(approved ? "You approved tool:exec" : "You denied tool:exec");
  await expect(settledOf(winner, run.approvalId)).toHaveCount(0);
  const lost = settledOf(loser, run.approvalId);
  await expect(lost).toHaveAttribute("data-status", approved ? "approved" : "denied");
  const outcome = lost.getByTestId("settled-outcome");
  // Who won is named with the email beside the name: a look-alike display name cannot pass for them.
  await expect(outcome).toContainText(`Already settled: ${approved ? `Approved by ${DEMO_OPERATOR}` : `Denied by ${personText(olga.name, olga.email)}`} via the console at `);
  await expect(outcome).toContainText(approved ? "Your denial was not used." : "Your approval was not used.");
  await expect(outcome.locator("time").first()).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);
  await expect(noteOf(loser, run.approvalId)).toHaveCount(0);
  await screenshot(loser, "decision-lost-race");
  for (const p of [page, other]) await p.unroute("**/api/trpc/approvals.decide*");

  // Decided elsewhere while both look at it (an API client over HTTP): the card stays on both pages and says so.
  const later = await startEchoRun(request, creds.apiKey, uniqueMarker());
  for (const p of [page, other]) await openApproval(p, later.approvalId);
  expect((await request.post(`/v1/approvals/${later.approvalId}`, { headers: bearer(creds.apiKey), data: { decision: "deny" } })).status()).toBe(200);
  for (const p of [page, other]) {
    const kept = settledOf(p, later.approvalId).getByTestId("settled-outcome");
    await expect(kept).toContainText(`Settled while you were looking: Denied by ${DEMO_OPERATOR}`);
    await expect(kept).toContainText("via the HTTP API at ");
    await expect(kept).not.toContainText("was not used");
  }
  await expect(settledOf(page, later.approvalId)).toContainText("(you, elsewhere)");
  await settledOf(other, later.approvalId).getByRole("button", { name: "Dismiss" }).click();
  await expect(settledOf(other, later.approvalId)).toHaveCount(0);
  await other.context().close();
});
