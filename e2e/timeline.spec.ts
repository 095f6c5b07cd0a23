import { expect, test } from "@playwright/test";
import { bearer, demoCredentials, screenshotBoth, startEchoRun, uniqueMarker } from "./support";

// A zone that is not the machine's: the timeline names it and shows times in it.
test.use({ timezoneId: "Europe/Berlin" });

test("the timeline shows the run by turn and tool call, the wait for the decider, and hides lifecycle noise until asked", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startEchoRun(request, creds.apiKey, uniqueMarker());
  // A person takes a moment before deciding: that time is the wait.
  await page.waitForTimeout(1600);
  const decided = await request.post(`/v1/approvals/${run.approvalId}`, { headers: bearer(creds.apiKey), data: { decision: "approve" } });
  expect(((await decided.json()) as { status: string }).status).toBe("completed");

  await page.goto(`/responses/${run.responseId}`);
  const timeline = page.getByTestId("timeline");
  await expect(timeline.getByTestId("timeline-turn")).toHaveCount(2);
  const call = timeline.getByTestId("timeline-call");
  await expect(call).toHaveCount(1);
  await expect(call).toContainText("Tool call exec");
  const wait = call.getByTestId("timeline-wait");
  await expect(wait).toHaveText(/waited (1\.[6-9]|[2-9]\.\d) s for Demo Operator \(operator@countersign\.local\) — approved/);
  await expect(timeline.getByTestId("timeline-totals")).toContainText(/waited for people (1\.[6-9]|[2-9]\.\d) s/);
  await expect(timeline.getByTestId("timeline-totals")).toContainText("output tokens");
  await expect(timeline.getByTestId("turn-tokens").first()).toContainText("output tokens");
  // Dates with the time zone.
  await expect(timeline.getByTestId("timeline-zone")).toHaveText("Europe/Berlin");
  await expect(timeline.getByTestId("timeline-when")).toContainText(/GMT\+[12]\b/);

  // Lifecycle noise: hidden, then shown by the toggle, then hidden again.
  const noise = timeline.locator('[data-testid="timeline-event"][data-type^="harness."]');
  await expect(noise).toHaveCount(0);
  await expect(timeline.locator('[data-testid="timeline-event"][data-type="approval.resolved"]')).toHaveCount(1);
  await page.getByTestId("timeline-noise-toggle").check();
  await expect(noise.first()).toBeVisible();
  expect(await noise.count()).toBeGreaterThan(1);
  await page.getByTestId("timeline-noise-toggle").uncheck();
  await expect(noise).toHaveCount(0);

  // The output keeps each turn's text apart.
  const messages = page.getByTestId("output-message");
  await expect(messages).toHaveCount(2);
  await expect(messages.nth(0)).toHaveText("Listing");
  await expect(messages.nth(1)).toHaveText("Done.");

  await page.getByTestId("timeline").scrollIntoViewIfNeeded();
  await screenshotBoth(page, "response-page");
});
