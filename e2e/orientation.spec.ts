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

// A zone whose date differs from UTC's right now (east of UTC late in the UTC day, west early).
const zone = new Date().getUTCHours() >= 12 ? "Pacific/Kiritimati" : "Pacific/Pago_Pago";
test.describe("usage in the viewer's time zone", () => {
  test.use({ timezoneId: zone });

  test("usage days are the viewer's calendar days, not UTC's", async ({ page, request }) => {
    const creds = await demoCredentials();
    await startScript(request, creds.apiKey, { script: [{ text: "counted", usage: { outputTokens: 5 } }] });
    const dayIn = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
    expect(dayIn(zone)).not.toBe(dayIn("UTC"));
    await page.goto("/usage");
    await expect(page.getByTestId("usage-zone")).toHaveText(zone);
    const days = page.locator('[data-testid="usage-row"] td:first-child');
    await expect(days.first()).toBeVisible();
    // Every run of this test session happened today: in the viewer's zone, that is one day.
    await expect(days).toHaveText(Array(await days.count()).fill(dayIn(zone)));
  });
});
