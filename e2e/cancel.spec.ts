import { expect, test } from "@playwright/test";
import { demoCredentials, screenshot, startEchoRun, uniqueMarker } from "./support";

test("cancelling a waiting response from its page ends it and clears its approval", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);

  await page.goto("/approvals");
  const card = page.getByTestId("approval").filter({ hasText: marker });
  await expect(card).toBeVisible();
  // Keyboard only: the response link in the card, then the cancel confirmation.
  await card.getByRole("link", { name: run.responseId }).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(`/responses/${run.responseId}`);

  await page.getByRole("button", { name: "Cancel response" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("button", { name: "Keep running" })).toBeVisible();
  await screenshot(page, "response-cancel-confirm");
  await page.getByRole("button", { name: "Yes, cancel it" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByRole("button", { name: "Cancel response" })).toHaveCount(0);
  await expect(page.getByTestId("required-action")).toHaveCount(0);

  await page.getByRole("link", { name: /^Approvals/ }).click();
  await expect(page.getByRole("heading", { name: "Approvals", level: 1 })).toBeVisible();
  await expect(page.getByTestId("approval").filter({ hasText: marker })).toHaveCount(0);
  await expect(page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`).getByTestId("status")).toHaveText("cancelled");
});
