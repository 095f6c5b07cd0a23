import { expect, test } from "@playwright/test";
import { addUser, bearer, DEMO_OPERATOR, demoCredentials, openApproval, screenshot, signedInPage, startEchoRun, startQuestionRun, trpcMutationAsPage, uniqueMarker } from "./support";

test("an auditor sees everything and decides nothing: no buttons, no shortcuts, and the server refuses", async ({ browser, baseURL, request }) => {
  const creds = await demoCredentials();
  const auditor = addUser("Audrey Auditor", "auditor");
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  const page = await signedInPage(browser, baseURL, auditor);
  await page.goto("/approvals");
  await expect(page.getByTestId("signed-in-user")).toContainText("auditor");
  // The compact inbox shows the selected request in full.
  const card = await openApproval(page, run.approvalId);
  await expect(card).toContainText(marker);
  await expect(card.getByRole("button", { name: "Approve" })).toHaveCount(0);
  await expect(card.getByRole("button", { name: "Deny" })).toHaveCount(0);
  await expect(card.getByRole("checkbox")).toHaveCount(0);
  await expect(card.getByTestId("read-only")).toBeVisible();
  await expect(page.getByTestId("shortcut-hint")).toContainText("read-only");
  // The keys do nothing for an auditor.
  await card.click();
  await page.keyboard.press("a");
  await page.waitForTimeout(500);
  await expect(card).toBeVisible();
  await screenshot(page, "auditor-inbox");

  // The server refuses, whatever the page shows.
  const [row] = await page.evaluate(async (id) => {
    const res = await fetch(`/api/trpc/inbox.list?input=${encodeURIComponent(JSON.stringify({ status: "pending", limit: 200 }))}`);
    return ((await res.json()) as { result: { data: { rows: Array<{ id: string; bindingHash: string }> } } }).result.data.rows.filter((r) => r.id === id);
  }, run.approvalId);
  const decide = await trpcMutationAsPage(page, "approvals.decide", { approvalId: run.approvalId, decision: "approve", bindingHash: row?.bindingHash });
  expect(decide.status).toBe(403);
  expect(decide.body).toContain("FORBIDDEN");
  const bulk = await trpcMutationAsPage(page, "inbox.decideMany", { decision: "deny", items: [{ approvalId: run.approvalId, bindingHash: row?.bindingHash }] });
  expect(bulk.status).toBe(403);
  const cancel = await trpcMutationAsPage(page, "responses.cancel", { responseId: run.responseId });
  expect(cancel.status).toBe(403);
  const steer = await trpcMutationAsPage(page, "responses.steer", { responseId: run.responseId, text: "hello" });
  expect(steer.status).toBe(403);
  const key = await trpcMutationAsPage(page, "admin.createApiKey", { name: "nope" });
  expect(key.status).toBe(403);

  // Response page: readable (with its trajectory), but no cancel and no steering.
  await page.goto(`/responses/${run.responseId}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "requires_action");
  await expect(page.getByRole("button", { name: "Cancel response" })).toHaveCount(0);
  await expect(page.getByTestId("steer-form")).toHaveCount(0);
  await expect(page.getByTestId("trajectory-event").first()).toBeVisible();

  // Export is allowed for auditors.
  const exported = await page.request.get(`/api/export/trajectory?responseId=${run.responseId}`);
  expect(exported.status()).toBe(200);

  // Admin: reads users and keys, changes nothing.
  await page.goto("/admin");
  await expect(page.getByTestId("users-table")).toContainText("Demo Operator");
  await expect(page.getByTestId("users-table").getByRole("combobox")).toHaveCount(0);
  await page.getByRole("tab", { name: "API keys" }).click();
  await expect(page.getByTestId("read-only")).toBeVisible();
  await expect(page.getByTestId("create-key-form")).toHaveCount(0);
  await page.context().close();

  // Still pending: nothing the auditor did decided it.
  const still = await request.get(`/v1/responses/${run.responseId}?sessionId=${run.sessionId}`, { headers: bearer(creds.apiKey) });
  expect(((await still.json()) as { status: string }).status).toBe("requires_action");
  await request.post(`/v1/responses/${run.responseId}/cancel`, { headers: bearer(creds.apiKey) });
});

test("a member sees only its own work; an operator answers its question on its behalf, and that is recorded", async ({ browser, baseURL, page, request }) => {
  const creds = await demoCredentials();
  const member = addUser("Mia Member", "member");
  const marker = uniqueMarker();
  const others = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const mine = await startQuestionRun(request, member.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: `Where to deploy? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
  });

  const memberPage = await signedInPage(browser, baseURL, member);
  await memberPage.goto("/");
  await expect(memberPage.locator(`[data-testid="waiting-item"][data-id="${mine.questionId}"]`)).toBeVisible();
  await expect(memberPage.locator(`[data-testid="waiting-item"][data-id="${others.approvalId}"]`)).toHaveCount(0);
  await memberPage.goto(`/responses/${others.responseId}`);
  await expect(memberPage.locator(".error-box")).toContainText("not yours");
  await memberPage.goto("/admin");
  await expect(memberPage.getByRole("tab", { name: "Users & roles" })).toHaveCount(0);
  await expect(memberPage.getByRole("tab", { name: "API keys" })).toHaveAttribute("aria-selected", "true");

  // The operator (Demo Operator) answers the member's question: allowed for its role, and recorded.
  await page.goto(`/answer/${mine.questionId}`);
  await expect(page.getByTestId("answering-on-behalf")).toContainText("Mia Member");
  await page.getByRole("radio", { name: "prod" }).check();
  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
  await expect(page.getByTestId("on-behalf")).toContainText("Mia Member");

  await memberPage.goto("/questions");
  const settled = memberPage.locator(`[data-testid="settled-question"][data-question-id="${mine.questionId}"]`);
  await expect(settled.getByTestId("answered-by")).toHaveText(DEMO_OPERATOR);
  await expect(settled.getByTestId("on-behalf")).toContainText("on behalf of Mia Member");
  await screenshot(memberPage, "questions-on-behalf");
  await memberPage.context().close();
  await request.post(`/v1/responses/${others.responseId}/cancel`, { headers: bearer(creds.apiKey) });
});

test("a member's own approval shows why it cannot decide it (no buttons); an operator approves it", async ({ browser, baseURL, page, request }) => {
  const member = addUser("Max Member", "member");
  const marker = uniqueMarker();
  const run = await startEchoRun(request, member.apiKey, marker);

  const memberPage = await signedInPage(browser, baseURL, member);
  await memberPage.goto("/approvals");
  const own = await openApproval(memberPage, run.approvalId);
  await expect(own).toContainText(marker);
  await expect(own.getByTestId("decide-refusal")).toHaveText('You started this run; the agent "scripted" requires another person to approve it.');
  await expect(own.getByRole("button", { name: "Approve" })).toHaveCount(0);
  await expect(own.getByRole("button", { name: "Deny" })).toHaveCount(0);
  await expect(own.getByRole("checkbox")).toHaveCount(0);
  // The shortcut sends nothing either.
  await own.click();
  await memberPage.keyboard.press("a");
  await memberPage.waitForTimeout(500);
  await expect(own).toBeVisible();
  await screenshot(memberPage, "own-run-refused");
  await memberPage.context().close();
  expect(((await (await request.get(`/v1/responses/${run.responseId}?sessionId=${run.sessionId}`, { headers: bearer(member.apiKey) })).json()) as { status: string }).status).toBe("requires_action");

  // The operator (Demo Operator) may decide it.
  await page.goto("/approvals");
  const card = await openApproval(page, run.approvalId);
  await expect(card.getByTestId("decide-refusal")).toHaveCount(0);
  await card.getByRole("button", { name: "Approve" }).click();
  await expect(card).toHaveCount(0);
  await expect
    .poll(async () => ((await (await request.get(`/v1/responses/${run.responseId}?sessionId=${run.sessionId}`, { headers: bearer(member.apiKey) })).json()) as { status: string }).status)
    .toBe("completed");
});
