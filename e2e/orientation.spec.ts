import { expect, test } from "@playwright/test";
import { demoCredentials, screenshotBoth, startEchoRun, startScript, uniqueMarker } from "./support";

test("'Decide in the Approvals inbox' opens that very approval", async ({ page, request }) => {
  const creds = await demoCredentials();
  // Two waiting approvals: the link must select its own, not the first one.
  const mine = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await startEchoRun(request, creds.apiKey, uniqueMarker());
  await page.goto(`/responses/${mine.responseId}`);
  await page.getByTestId("decide-in-inbox").click();
  await expect(page).toHaveURL(new RegExp(`/approvals\\?focus=${mine.approvalId}$`));
  const card = page.locator(`[data-testid="approval"][data-approval-id="${mine.approvalId}"]`);
  await expect(card).toHaveAttribute("data-selected", "true");
  await expect(card).toBeInViewport();
  await expect(page.locator('[data-testid="approval"][data-selected="true"]')).toHaveCount(1);
});

test("the answer page says which agent and task ask, with the run's last message", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const ask = { name: "ask_user", arguments: { questions: [{ id: "env", header: "Env", question: `Where to? ${marker}`, options: [{ label: "staging" }, { label: "prod" }] }] } };
  const run = await startScript(request, creds.apiKey, { script: [{ text: `I have built the release ${marker}.`, toolCalls: [ask] }, { text: "done" }] }, { metadata: { task: "Ship the release" } });
  expect(run.requiredAction?.type).toBe("question");

  await page.goto(`/answer/${run.requiredAction?.id}`);
  const context = page.getByTestId("question-context");
  await expect(context.getByTestId("context-agent")).not.toBeEmpty();
  await expect(context.getByTestId("context-task")).toHaveText("Ship the release");
  await expect(context.getByTestId("context-last-message")).toContainText(`I have built the release ${marker}.`);
  await screenshotBoth(page, "answer-page");
});

test("a client-tool request says what the client must do and by when", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "get_page_context", arguments: {} }] }, { text: "done" }] });
  expect(run.requiredAction?.type).toBe("client_tool");
  await page.goto(`/responses/${run.id}`);
  const path = page.getByTestId("client-tool-path");
  await expect(path).toContainText(`POST /v1/client-tools/${run.requiredAction?.id}`);
  await expect(path).toContainText("Submit its output before");
  await expect(path.locator("time")).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);
});

/**
 * A zone whose calendar date differs from UTC's when the test's page is made: UTC+14 from 10:00
 * UTC on (its date is already tomorrow until UTC midnight), UTC−11 before (still yesterday until
 * 11:00 UTC). Chosen then, not when the file loads (a file loaded at 09:59 may run at 10:00 or
 * later); within a minute of UTC midnight, where the east zone is about to share UTC's date, it
 * waits until midnight has passed.
 */
async function zoneDifferingFromUtc(): Promise<string> {
  const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (toMidnight < 60_000) await new Promise((resolve) => setTimeout(resolve, toMidnight + 1000));
  return new Date().getUTCHours() >= 10 ? "Pacific/Kiritimati" : "Pacific/Pago_Pago";
}

test.describe("usage in the viewer's time zone", () => {
  // Playwright reads a fixture function's first parameter as the fixtures it needs: none here.
  // biome-ignore lint/correctness/noEmptyPattern: Playwright's fixture signature
  test.use({ timezoneId: async ({}, use) => use(await zoneDifferingFromUtc()) });
  test("usage days are the viewer's calendar days, not UTC's", async ({ page, request }) => {
    const creds = await demoCredentials();
    await startScript(request, creds.apiKey, { script: [{ text: "counted", usage: { outputTokens: 5 } }] });
    const dayIn = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
    await page.goto("/usage");
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(dayIn(zone)).not.toBe(dayIn("UTC"));
    await expect(page.getByTestId("usage-zone")).toHaveText(zone);
    const days = page.locator('[data-testid="usage-row"] td:first-child');
    await expect(days.first()).toBeVisible();
    // The run just made is counted on the viewer's today, a date UTC has not (or no longer) reached.
    // (Earlier runs of the session may fall on the day before in the viewer's zone.)
    await expect.poll(() => days.allTextContents()).toContain(dayIn(zone));
  });
});
