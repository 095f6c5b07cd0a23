import { expect, test } from "@playwright/test";
import { demoCredentials, openApproval, screenshot, startEchoRun, uniqueMarker } from "./support";

test("an operator denies a command and the response ends denied without running it", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();

  await page.goto("/approvals");
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");
  const run = await startEchoRun(request, creds.apiKey, marker);

  const card = await openApproval(page, run.approvalId);
  await expect(card).toContainText(marker);
  await card.getByRole("button", { name: "Deny" }).click();
  await expect(card).toBeHidden();
  const decided = page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`);
  await expect(decided.getByTestId("status")).toHaveText("denied");

  await page.goto(`/responses/${run.responseId}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "denied");
  await expect(page.getByTestId("tool-result")).toHaveCount(0);
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "approval.resolved" })).toContainText("console");
  await screenshot(page, "response-denied");
});
