import { expect, type Locator, type Page, test } from "@playwright/test";
import { bearer, DEMO_OPERATOR, demoCredentials, openApproval, screenshot, startEchoRun, startQuestionRun, startScript, uniqueMarker } from "./support";

const DECIDE = "**/api/trpc/approvals.decide*";

/** No error a person reads may be raw JSON, HTML or a parser's message. */
async function expectSentence(box: Locator): Promise<void> {
  const text = (await box.textContent()) ?? "";
  expect(text).toMatch(/^[A-Z].*[.!?]$/s);
  expect(text).not.toMatch(/[{}<>]|Unexpected token|JSON|Failed to fetch|invalid_format/);
}

test("every kind of failure reads as a sentence naming what happened and what to do", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await page.goto("/approvals");
  const card = await openApproval(page, run.approvalId);
  const error = card.getByTestId("decide-error");
  const approve = card.getByRole("button", { name: "Approve", exact: true });

  // A proxy's HTML error page.
  await page.route(DECIDE, (route) => route.fulfill({ status: 502, contentType: "text/html", body: "<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>" }));
  await approve.click();
  await expect(error).toContainText("Something between you and Countersign (a proxy or gateway) answered with an error page (HTTP 502)");
  await expect(error).toContainText("reload the page to see the current state before trying again");
  await expectSentence(error);
  await screenshot(page, "decision-error-proxy");
  await page.unroute(DECIDE);

  // The network drops.
  await page.route(DECIDE, (route) => route.abort("connectionreset"));
  await approve.click();
  await expect(error).toContainText("The connection to Countersign dropped before it answered, so it is not known whether your decision arrived.");
  await expectSentence(error);
  await page.unroute(DECIDE);

  // 429 from a layer in front (Retry-After kept).
  await page.route(DECIDE, (route) => route.fulfill({ status: 429, headers: { "retry-after": "7" }, contentType: "application/json", body: JSON.stringify({ code: "rate_limited", detail: "Too many requests." }) }));
  await approve.click();
  await expect(error).toHaveText("Too many requests in a short time, so Countersign did not take your decision. Wait 7 seconds and try again.");
  await page.unroute(DECIDE);

  // 422: the server refuses the edited arguments; the request stays pending.
  await card.getByText("More options: edit, reply instead, standing grant").click();
  await card.getByTestId("edit-arguments").fill(JSON.stringify({ command: "" }));
  await card.getByTestId("approve-with-options").click();
  await expect(error).toContainText("Your decision was not accepted: ");
  await expect(error).toContainText("Correct it and try again.");
  await expectSentence(error);
  await card.getByTestId("edit-arguments").fill("{ not json");
  await card.getByTestId("approve-with-options").click();
  await expect(card.getByRole("alert").filter({ hasText: "Not valid JSON" })).toHaveText(/^Not valid JSON: check the quotes, commas and braces near character \d+, then approve again\.$/);
  await card.getByText("More options: edit, reply instead, standing grant").click();

  // 409: someone decides while this decision is on its way; the card stays and says who won.
  await page.route(DECIDE, async (route) => {
    expect((await request.post(`/v1/approvals/${run.approvalId}`, { headers: bearer(creds.apiKey), data: { decision: "deny" } })).status()).toBe(200);
    await route.continue();
  });
  await approve.click();
  const settled = page.locator(`[data-testid="approval-settled"][data-approval-id="${run.approvalId}"]`).getByTestId("settled-outcome");
  await expect(settled).toContainText(`Already settled: Denied by ${DEMO_OPERATOR} (you, elsewhere) via the HTTP API at `);
  await expect(settled).toContainText("Your approval was not used.");
  await expect(page.locator('p[aria-live="polite"]')).toHaveText("This approval was already denied; a decision is used once. Your decision was not used.");
  await page.unroute(DECIDE);

  // A malformed single-use link.
  await page.goto("/l/not-a-real-token");
  const outcome = page.getByTestId("link-outcome");
  await expect(outcome.getByRole("alert")).toHaveText("This link is malformed: it may have been cut short or changed on the way. Open the console and sign in to find the request instead.");
  await screenshot(page, "link-malformed");

  // The answer page: a dropped connection while sending an answer.
  const asked = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: "Where to deploy?", options: [{ label: "staging" }, { label: "prod" }] }] },
  });
  await page.goto(`/answer/${asked.questionId}`);
  await page.getByRole("radio", { name: "staging" }).check();
  await page.route("**/api/trpc/question.resolve*", (route) => route.abort("internetdisconnected"));
  await page.getByRole("button", { name: "Send answer" }).click();
  const answerError = page.getByTestId("answer-error");
  await expect(answerError).toContainText("The connection to Countersign dropped before it answered, so it is not known whether your answer arrived.");
  await expectSentence(answerError);
  await request.post(`/v1/responses/${asked.responseId}/cancel`, { headers: bearer(creds.apiKey) });
});

/** Whether `box` lies wholly inside a viewport of `size`. */
const inside = (box: { x: number; y: number; width: number; height: number } | null, size: { width: number; height: number }) =>
  !!box && box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width + 0.5 && box.y + box.height <= size.height + 0.5;

/** Scrolls the page through the command; wherever any of it is on screen, Approve must be wholly on screen too, close below its start. */
async function approveStaysBesideCommand(page: Page, card: Locator, size: { width: number; height: number }): Promise<number> {
  const args = card.getByTestId("arguments");
  const approve = card.getByRole("button", { name: "Approve", exact: true });
  const top = await args.evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
  const bottom = await args.evaluate((el) => el.getBoundingClientRect().bottom + window.scrollY);
  let checked = 0;
  for (let y = Math.max(0, top - size.height + 120); y <= bottom; y += 150) {
    await page.evaluate((to) => window.scrollTo(0, to), y);
    const a = await args.boundingBox();
    if (!a || a.y + a.height <= 60 || a.y >= size.height - 60) continue;
    const b = await approve.boundingBox();
    expect(inside(b, size), `Approve on screen at scroll ${y} (${size.width}×${size.height})`).toBe(true);
    expect((b?.y ?? 0) >= a.y, "Approve below the command's start").toBe(true);
    checked += 1;
  }
  return checked;
}

test("a 5,000-character command is shown once, with its length, beginning and end; Approve stays beside it at 1280×800 and 390×844", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const start = `echo START-${marker} `;
  const end = ` END-${marker}`;
  const command = `${start}${"0123456789abcdef ".repeat(400)}`.slice(0, 5000 - end.length) + end;
  expect(command).toHaveLength(5000);
  const run = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command } }] }, { text: "ok" }] }, { agent: "scripted-reviewed" });
  const approvalId = run.requiredAction?.id as string;

  for (const size of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(size);
    await page.goto(`/approvals?focus=${approvalId}`);
    const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
    const args = card.getByTestId("arguments");
    await expect(args).toContainText(`START-${marker}`);
    await expect(args).toContainText(`END-${marker}`);
    await expect(card.getByTestId("long-value")).toHaveAttribute("data-length", "5000");
    await expect(args).toContainText("(5,000 characters)");
    // Once: the sentence above abbreviates the command instead of repeating it.
    const message = (await card.locator(".approval-message").textContent()) ?? "";
    expect(message.length).toBeLessThan(250);
    expect(message).toContain("5,000 characters, shown in full below");
    // Risk label and the reviewer's reasons sit with the command.
    const what = card.getByTestId("what-runs");
    await expect(what.locator(".badge").first()).toHaveText(/risk/i);
    await expect(what.getByTestId("reviewer-rationale")).toBeVisible();
    expect(await approveStaysBesideCommand(page, card, size)).toBeGreaterThanOrEqual(2);
    // As a person sees it: the start of the command on screen, Approve held at the bottom of the screen.
    await page.evaluate(() => window.scrollTo(0, 0));
    await args.evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 200));
    await screenshot(page, size.width === 390 ? "long-command-phone" : "long-command", { viewport: true });

    // Expanded on demand: all of it, and Approve still beside it.
    await card.getByTestId("show-middle").click();
    await expect(args).toContainText(command.slice(2400, 2460));
    expect(await approveStaysBesideCommand(page, card, size)).toBeGreaterThanOrEqual(2);
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
  }
  await page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`).getByRole("button", { name: "Approve", exact: true }).click();
  await expect(page.locator(`[data-testid="decision-note"][data-approval-id="${approvalId}"]`)).toContainText("You approved tool:exec");
});
