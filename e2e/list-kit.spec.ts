import { expect, test } from "@playwright/test";
import { bearer, demoCredentials, screenshot, uniqueMarker } from "./support";

test("a list shows a skeleton while its first page loads, then rows, then 'Load older' brings the next page", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  // 51 responses whose input carries the marker: one more than a page (50).
  for (let i = 0; i < 51; i++) {
    const res = await request.post("/v1/responses", { headers: bearer(creds.apiKey), data: { input: { script: [{ text: `reply ${i} ${marker}` }] } } });
    expect(res.status(), await res.text()).toBe(200);
  }

  // A slow first answer, as on a slow network: the list says it is loading with placeholder rows.
  let slowed = false;
  await page.route(
    (url) => url.pathname.includes("audit.responses"),
    async (route) => {
      if (!slowed) {
        slowed = true;
        await new Promise((r) => setTimeout(r, 1500));
      }
      await route.continue();
    },
  );
  await page.goto("/responses");
  await expect(page.getByTestId("list-skeleton")).toBeVisible();
  await expect(page.getByText("Loading…")).toHaveCount(0);
  await expect(page.getByTestId("response-row").first()).toBeVisible();
  await expect(page.getByTestId("list-skeleton")).toHaveCount(0);
  await page.unroute((url) => url.pathname.includes("audit.responses"));

  // Only this test's responses: a full page, and the footer offers the older ones.
  await page.getByTestId("filter-search").fill(marker);
  await expect(page.getByTestId("shown-count")).toHaveText("50 shown");
  await expect(page.getByTestId("response-row")).toHaveCount(50);
  await screenshot(page, "list-kit-responses");
  await page.getByTestId("load-more").click();
  await expect(page.getByTestId("shown-count")).toHaveText("51 shown");
  await expect(page.getByTestId("response-row")).toHaveCount(51);
  await expect(page.getByTestId("load-more")).toHaveCount(0);
  // Status labels are the server's vocabulary with the console's names.
  await expect(page.getByTestId("filter-status").getByRole("button")).toHaveText(["running", "waiting", "completed", "denied", "cancelled", "failed"]);
});

test("a list with nothing to show says so, and why", async ({ page }) => {
  await page.goto("/responses");
  await page.getByTestId("filter-search").fill(`nothing-${uniqueMarker()}`);
  await expect(page.getByTestId("list-empty")).toContainText("No responses match these filters.");
  await expect(page.getByTestId("response-row")).toHaveCount(0);

  await page.goto("/sessions");
  await page.getByTestId("filter-search").fill(`sess_${uniqueMarker()}`);
  await expect(page.getByTestId("list-empty")).toContainText("No sessions match these filters.");
});
