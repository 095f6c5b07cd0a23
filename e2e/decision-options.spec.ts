import { expect, test } from "@playwright/test";
import { demoCredentials, openApproval, screenshot, startEchoRun, uniqueMarker } from "./support";

test("an approver edits the command and approves it with a session grant; the same call then runs without a prompt until revoked", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  await page.goto("/approvals");
  const card = await openApproval(page, run.approvalId);
  await card.getByText("More options: edit, reply instead, standing grant").click();
  const editor = card.getByTestId("edit-arguments");
  await expect(editor).toHaveValue(new RegExp(`echo ${marker}`));
  // Invalid JSON is caught before anything is sent.
  await editor.fill("{ not json");
  await card.getByTestId("approve-with-options").click();
  await expect(card.getByRole("alert")).toContainText("Not valid JSON");
  // A shape the tool refuses is refused by the server; the request stays pending.
  await editor.fill(JSON.stringify({ command: "" }));
  await card.getByTestId("approve-with-options").click();
  await expect(card.getByRole("alert")).toContainText("not valid for exec");
  await editor.fill(JSON.stringify({ command: `echo edited-${marker}` }));
  // The plain approve never carries a grant; the grant is its own button, confirmed with its scope.
  await expect(card.getByTestId("approve-with-options")).toHaveText("Approve the edited call once");
  await screenshot(page, "approval-options");
  await card.getByTestId("grant-session").click();
  const confirm = page.getByTestId("confirm-grant");
  await expect(confirm.getByTestId("grant-scope")).toContainText("Allow tool:exec with exactly these arguments for the rest of this session.");
  await expect(confirm).toContainText(`echo edited-${marker}`);
  await confirm.getByRole("button", { name: "Approve and allow for this session" }).click();
  await expect(card).toBeHidden();
  const decided = page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`);
  await expect(decided.getByTestId("decided-edited")).toContainText(`echo ${marker}`);
  await expect(decided.getByTestId("decided-grant")).toBeVisible();

  await page.goto(`/responses/${run.responseId}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "completed");
  await expect(page.getByTestId("tool-result").filter({ hasText: `edited-${marker}` })).toContainText("Edited by an approver before running");

  // The same (edited) operation in the same session runs without a prompt.
  const again = await request.post("/v1/responses", {
    headers: { authorization: `Bearer ${creds.apiKey}` },
    data: { sessionId: run.sessionId, input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo edited-${marker}` } }] }, { text: "Again." }] } },
  });
  expect(((await again.json()) as { status: string }).status).toBe("completed");

  await page.goto("/grants");
  const grant = page.getByTestId("grant").filter({ hasText: `edited-${marker}` });
  await expect(grant).toBeVisible();
  await expect(grant).toContainText("this session");
  await expect(grant).toContainText("1");
  await screenshot(page, "grants");
  await grant.getByTestId("revoke-grant").click();
  await grant.getByRole("button", { name: "Revoke now" }).click();
  await expect(grant).toBeHidden();

  const third = await request.post("/v1/responses", {
    headers: { authorization: `Bearer ${creds.apiKey}` },
    data: { sessionId: run.sessionId, input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo edited-${marker}` } }] }, { text: "Third." }] } },
  });
  expect(((await third.json()) as { status: string }).status).toBe("requires_action");
});

test("an approver denies with a reply; the agent receives the message and the run completes", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  await page.goto("/approvals");
  const card = await openApproval(page, run.approvalId);
  await card.getByText("More options: edit, reply instead, standing grant").click();
  await card.getByTestId("deny-with-reply").click();
  await expect(card.getByRole("alert")).toContainText("Write the reply");
  await card.getByTestId("reply-message").fill(`use staging instead ${marker}`);
  await card.getByTestId("deny-with-reply").click();
  await expect(card).toBeHidden();
  const decided = page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`);
  await expect(decided.getByTestId("decided-reply")).toContainText(`use staging instead ${marker}`);

  await page.goto(`/responses/${run.responseId}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "completed");
  await expect(page.getByTestId("tool-result")).toContainText(`use staging instead ${marker}`);
});
