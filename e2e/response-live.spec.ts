import { expect, test } from "@playwright/test";
import { bearer, demoCredentials, screenshot, startScript, uniqueMarker } from "./support";

test("a response's output streams live; a person steers it and cancels it while it runs", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startScript(request, creds.apiKey, {
    script: [
      { text: `Step one ${marker}`, toolCalls: [{ name: "exec", arguments: { command: `echo one-${marker}` } }], usage: { outputTokens: 11 } },
      { text: `Step two ${marker}`, toolCalls: [{ name: "exec", arguments: { command: "sleep 30" } }], usage: { outputTokens: 7 } },
      { text: "never reached" },
    ],
  });
  expect(run.requiredAction?.type).toBe("human_approval");

  await page.goto(`/responses/${run.id}`);
  const status = page.getByTestId("status").first();
  await expect(status).toHaveAttribute("data-status", "requires_action");
  const output = page.getByTestId("live-output");
  await expect(output).toContainText(`Step one ${marker}`);
  await expect(output).toContainText("▸ exec");
  await expect(output).toContainText("waiting for a person to approve");
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");

  // Approved over HTTP: the page follows without a reload — the result, the next turn's text, the next wait.
  const first = await request.post(`/v1/approvals/${run.requiredAction?.id}`, { headers: bearer(creds.apiKey), data: { decision: "approve" } });
  expect(first.status()).toBe(200);
  const second = (await first.json()) as { status: string; requiredAction: { id: string } };
  expect(second.status).toBe("requires_action");
  await expect(output).toContainText(`one-${marker}`);
  await expect(output).toContainText(`Step two ${marker}`);
  await expect(page.getByTestId("usage-output")).toHaveText("18");

  // Approving `sleep 30` leaves the run executing; the HTTP call waits for its next boundary.
  const running = request.post(`/v1/approvals/${second.requiredAction.id}`, { headers: bearer(creds.apiKey), data: { decision: "approve" }, timeout: 60_000 });
  await expect(status).toHaveAttribute("data-status", "in_progress");
  await expect(output).toContainText("approval approved");

  // Steer: queued for the next model turn, recorded in the trajectory.
  await page.getByLabel(/Steer this response/).fill(`Stop after this step (${marker})`);
  await page.getByRole("button", { name: "Send to agent" }).click();
  await expect(page.getByTestId("steer-sent")).toContainText("Stop after this step");
  await expect(output).toContainText("steering message queued");
  await page.getByTestId("trajectory-search").fill("steer.");
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "steer.queued" })).toContainText("Demo Operator");
  await screenshot(page, "response-live");

  // Cancel while the command runs: the run ends cancelled; the waiting HTTP call gets that boundary.
  await page.getByRole("button", { name: "Cancel response" }).click();
  await page.getByRole("button", { name: "Yes, cancel it" }).click();
  await expect(status).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByTestId("ending")).toContainText("cancelled");
  await expect(page.getByRole("button", { name: "Cancel response" })).toHaveCount(0);
  await expect(page.getByTestId("steer-form")).toHaveCount(0);
  const ended = await running;
  expect(((await ended.json()) as { status: string }).status).toBe("cancelled");
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "steer.cancelled" })).toBeVisible();
  await page.getByTestId("trajectory-search").fill("response.cancelled");
  await expect(page.getByTestId("trajectory-event")).toHaveCount(1);
  await expect(page.getByTestId("trajectory-event")).toContainText("Demo Operator");
});
