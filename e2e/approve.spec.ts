import { expect, test } from "@playwright/test";
import { bearer, demoCredentials, openApproval, SIGNED_OUT, screenshot, signIn, startEchoRun, uniqueMarker } from "./support";

test.describe("signed out at first", () => {
  test.use({ storageState: SIGNED_OUT });

  test("an operator signs in, approves a command that appears live in the inbox, and the run completes", async ({ page, request }) => {
    const creds = await demoCredentials();
    const marker = uniqueMarker();

    await signIn(page, creds);
    await expect(page).toHaveURL("/");
    await expect(page.getByRole("heading", { name: "Waiting", level: 1 })).toBeVisible();
    await expect(page.getByTestId("signed-in-user")).toContainText("Demo Operator");
    await page.getByRole("link", { name: /^Approvals/ }).click();
    await expect(page).toHaveURL("/approvals");
    await expect(page.getByRole("heading", { name: "Approvals", level: 1 })).toBeVisible();
    await expect(page.getByTestId("live-indicator")).toHaveText("Live");

    // The run is created by an API client while the page is open: no reload after this point.
    const run = await startEchoRun(request, creds.apiKey, marker);
    const card = await openApproval(page, run.approvalId);
    await expect(card).toContainText(marker);
    await expect(card).toHaveAttribute("data-approval-id", run.approvalId);
    await expect(card.locator("pre")).toContainText(`"command": "echo ${marker}"`);
    await expect(card).toContainText("tool:exec");
    await expect(card).toContainText("Working directory");
    await expect(card.getByTestId("expiry")).toContainText(/expires in \d+m/);
    await expect(card).toContainText(run.sessionId);
    await screenshot(page, "inbox-pending");

    await card.getByRole("button", { name: "Approve" }).click();
    await expect(card).toBeHidden();
    const decided = page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`);
    await expect(decided.getByTestId("status")).toHaveText("approved");
    await expect(decided).toContainText("Demo Operator");
    await expect(decided).toContainText("console");
    await screenshot(page, "inbox-decided");

    await decided.getByRole("link", { name: `Open response ${run.responseId}` }).click();
    await expect(page).toHaveURL(`/responses/${run.responseId}`);
    await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "completed");
    await expect(page.getByTestId("tool-result").filter({ hasText: marker })).toBeVisible();
    await expect(page.getByTestId("output-text")).toContainText("Done.");
    await expect(page.getByTestId("trajectory-event").filter({ hasText: "approval.resolved" })).toContainText("Demo Operator");
    await expect(page.getByRole("button", { name: "Cancel response" })).toHaveCount(0);
    await screenshot(page, "response-completed");

    await page.getByRole("link", { name: "Responses", exact: true }).click();
    await expect(page.locator(`[data-testid="response-row"][data-response-id="${run.responseId}"]`).getByTestId("status")).toHaveText("completed");
    await screenshot(page, "responses-list");
  });
});

test("an open response page turns completed without reload when the run resumes", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  await page.goto(`/responses/${run.responseId}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "requires_action");
  await expect(page.getByTestId("required-action")).toContainText(`echo ${marker}`);
  await expect(page.getByRole("button", { name: "Cancel response" })).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");
  await screenshot(page, "response-requires-action");

  // Decided by the API client over HTTP, not through this page.
  const res = await request.post(`/v1/approvals/${run.approvalId}`, {
    headers: { authorization: `Bearer ${creds.apiKey}` },
    data: { decision: "approve" },
  });
  expect(res.status()).toBe(200);

  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "completed");
  await expect(page.getByTestId("tool-result").filter({ hasText: marker })).toBeVisible();
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "approval.resolved" })).toContainText("http");
});

test("a coding agent's edit reads as a unified diff and its command with every flag; approving answers exactly that input", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const input = { file_path: `/repo/${marker}.ts`, old_string: "const a = 1;\nconst b = 2;", new_string: "const a = 1;\nconst b = 3;", replace_all: false };
  const created = await request.post("/v1/approvals", { headers: bearer(creds.apiKey), data: { action: "coding:Edit", arguments: input } });
  expect(created.status(), await created.text()).toBe(201);
  const { id } = (await created.json()) as { id: string };

  await page.goto("/approvals");
  const card = await openApproval(page, id);
  const view = card.getByTestId("operation-view");
  await expect(view.locator('[data-label="file_path"]')).toContainText(input.file_path);
  await expect(view.locator(".diff-del")).toHaveText("-const b = 2;\n");
  await expect(view.locator(".diff-add")).toHaveText("+const b = 3;\n");
  // Every field of the input is shown, the flags too.
  await expect(view.locator('[data-label="replace_all"]')).toContainText("false");
  await screenshot(page, "inbox-coding-edit");

  await card.getByRole("button", { name: "Approve" }).click();
  await expect(card).toBeHidden();
  const decided = await request.get(`/v1/approvals/${id}`, { headers: bearer(creds.apiKey) });
  expect(await decided.json()).toMatchObject({ status: "approved", edited: false, arguments: input });
});
