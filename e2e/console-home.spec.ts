import { expect, test } from "@playwright/test";
import { bearer, demoCredentials, screenshot, startEchoRun, startQuestionRun, startScript, uniqueMarker } from "./support";

test("home lists everything waiting, per kind, live — also after the connection drops and returns", async ({ page, request, context }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();

  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Waiting", level: 1 })).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");
  const before = Number(await page.getByTestId("count-approval").locator(".kind-count").textContent());

  // Created by API clients while the page is open: every kind shows up without a reload.
  const approval = await startEchoRun(request, creds.apiKey, marker);
  const question = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: `Deploy where? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
  });
  const clientTool = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "get_page_context", arguments: {} }] }, { text: "done" }] });
  expect(clientTool.requiredAction?.type).toBe("client_tool");
  // A steering message queued on a waiting run waits for its next model turn.
  const steer = await request.post(`/v1/responses/${approval.responseId}/steer`, { headers: bearer(creds.apiKey), data: { text: `also tidy up (${marker})` } });
  expect(steer.status(), await steer.text()).toBe(202);

  const row = (id: string) => page.locator(`[data-testid="waiting-item"][data-id="${id}"]`);
  await expect(row(approval.approvalId)).toBeVisible();
  await expect(row(approval.approvalId)).toHaveAttribute("data-kind", "approval");
  await expect(row(approval.approvalId)).toContainText("tool:exec");
  await expect(row(approval.approvalId)).toContainText("Demo Operator");
  await expect(row(approval.approvalId).getByTestId("expiry")).toContainText(/expires in \d+m/);
  await expect(row(question.questionId)).toHaveAttribute("data-kind", "question");
  await expect(row(question.questionId)).toContainText(`Deploy where? (${marker})`);
  await expect(page.locator(`[data-testid="waiting-item"][data-kind="client_tool"][data-response-id="${clientTool.id}"]`)).toContainText("get_page_context");
  await expect(page.locator(`[data-testid="waiting-item"][data-kind="steering"][data-response-id="${approval.responseId}"]`)).toContainText(marker);
  await expect(page.getByTestId("count-approval").locator(".kind-count")).toHaveText(String(before + 1));
  await expect(page.getByTestId("activity-event").filter({ hasText: "Approval requested" }).first()).toBeVisible();
  await expect(page.getByTestId("nav-approvals-count")).toBeVisible();
  await screenshot(page, "home");

  // Filter by kind.
  await page.getByTestId("count-question").click();
  await expect(page.locator('[data-testid="waiting-item"][data-kind="approval"]')).toHaveCount(0);
  await expect(row(question.questionId)).toBeVisible();
  await page.getByTestId("count-question").click();

  // Offline for a moment: what happens meanwhile is there once the feed reconnects (it resumes from the last event id).
  await context.setOffline(true);
  const whileAway = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await page.waitForTimeout(1500);
  await context.setOffline(false);
  await expect(row(whileAway.approvalId)).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId("live-indicator")).toHaveText("Live", { timeout: 20_000 });

  // Decided elsewhere (HTTP): it leaves the list by itself.
  const decided = await request.post(`/v1/approvals/${whileAway.approvalId}`, { headers: bearer(creds.apiKey), data: { decision: "deny" } });
  expect(decided.status()).toBe(200);
  await expect(row(whileAway.approvalId)).toHaveCount(0);

  // "Decide" leads to the inbox with that request selected.
  await row(approval.approvalId).getByRole("link", { name: "Decide" }).click();
  await expect(page).toHaveURL(new RegExp(`/approvals\\?focus=${approval.approvalId}$`));
  await expect(page.locator(`[data-testid="approval"][data-approval-id="${approval.approvalId}"]`)).toHaveAttribute("data-selected", "true");

  // Leave nothing waiting for the next tests.
  for (const id of [approval.responseId, question.responseId, clientTool.id]) {
    expect((await request.post(`/v1/responses/${id}/cancel`, { headers: bearer(creds.apiKey) })).status()).toBe(200);
  }
});
