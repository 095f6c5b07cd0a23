import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { bearer, demoCredentials, gateway, screenshotBoth, startScript, uniqueMarker } from "./support";

/**
 * The questions list, the standing grants and the Admin tables page on the server: the first page
 * holds 50 rows, "Load older" fetches the next keyset page, and the button goes away on the last.
 * Rows are made through /v1, the gateway and tRPC with the demo operator's API key.
 */
const PAGE = 50;

async function trpcMutation(request: APIRequestContext, apiKey: string, path: string, input: unknown): Promise<unknown> {
  const res = await request.post(`/api/trpc/${path}`, { headers: bearer(apiKey), data: input });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: unknown } }).result.data;
}

/** How many rows of `testId` rows the page shows, once it stops changing. */
const rowCount = (page: Page, rowTestId: string) => page.getByTestId(rowTestId).count();

/** The first page shows exactly 50; "Load older" brings at least `atLeast` in all and then disappears. */
async function pagesThrough(page: Page, rowTestId: string, buttonTestId: string, atLeast: number): Promise<void> {
  await expect(page.getByTestId(rowTestId)).toHaveCount(PAGE);
  const button = page.getByTestId(buttonTestId);
  await expect(button).toBeVisible();
  await expect(button).toHaveText("Load older");
  // The button sits on screen below the table, within the page's width.
  const box = await button.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= (page.viewportSize()?.width ?? 1280)).toBe(true);
  while (await button.isVisible()) {
    const before = await rowCount(page, rowTestId);
    await button.click();
    await expect.poll(() => rowCount(page, rowTestId)).toBeGreaterThan(before);
  }
  expect(await rowCount(page, rowTestId)).toBeGreaterThanOrEqual(atLeast);
  const ids = await page.getByTestId(rowTestId).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-question-id") ?? r.getAttribute("data-grant-id") ?? r.getAttribute("data-user-id") ?? r.textContent));
  expect(new Set(ids).size).toBe(ids.length);
}

test("questions: 50 pending on the first page, the rest behind Load older", async ({ page, request }) => {
  test.setTimeout(120_000);
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const questions = [{ questionId: "pick", header: "Pick", question: `Which one? (${marker})`, options: [{ label: "a" }, { label: "b" }] }];
  for (let i = 0; i < PAGE + 5; i++) await gateway(request, creds.apiKey, "question.request", { questions, timeoutMs: 600_000 });

  await page.goto("/questions");
  await expect(page.getByRole("heading", { level: 1, name: "Questions" })).toBeVisible();
  await expect(page.getByTestId("pending-questions-count")).toHaveText(`${PAGE}+`);
  await screenshotBoth(page, "questions-paged");
  await pagesThrough(page, "pending-question", "load-older-pending-questions", PAGE + 5);
  await expect(page.getByTestId("pending-questions-count")).not.toHaveText(/\+/);
});

test("grants: a page of 50 standing grants, then the older ones", async ({ page, request }) => {
  test.setTimeout(180_000);
  const creds = await demoCredentials();
  for (let i = 0; i < PAGE + 2; i++) {
    const run = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo grant-${i}` } }] }, { text: "done" }] });
    const res = await request.post(`/v1/approvals/${run.requiredAction?.id}`, { headers: bearer(creds.apiKey), data: { decision: "approve", grant: "session" } });
    expect(res.status(), await res.text()).toBe(200);
  }
  await page.goto("/grants");
  await expect(page.getByRole("heading", { level: 1, name: "Standing grants" })).toBeVisible();
  await screenshotBoth(page, "grants-paged");
  await pagesThrough(page, "grant", "load-older-grants", PAGE + 2);
});

test("Admin: API keys and devices page through Load older", async ({ page, request }) => {
  test.setTimeout(120_000);
  const creds = await demoCredentials();
  const tag = uniqueMarker().slice(4, 14);
  for (let i = 0; i < PAGE + 3; i++) await trpcMutation(request, creds.apiKey, "admin.createApiKey", { name: `paged ${tag} ${i}` });
  for (let i = 0; i < PAGE + 3; i++) await trpcMutation(request, creds.apiKey, "devices.createPairing", { name: `paged-${tag}-${i}` });

  await page.goto("/admin");
  await page.getByRole("tab", { name: "API keys" }).click();
  await screenshotBoth(page, "admin-keys-paged");
  await pagesThrough(page, "key-row", "load-older-keys", PAGE + 3);

  await page.getByRole("tab", { name: "Paired devices" }).click();
  await pagesThrough(page, "device-row", "load-older-devices", PAGE + 3);
  await expect(page.getByTestId("device-row").filter({ hasText: `paged-${tag}-0` })).toHaveCount(1);
});

test("Admin: the users table pages too (a short list has no Load older)", async ({ page }) => {
  await page.goto("/admin");
  await expect(page.getByTestId("users-table")).toBeVisible({ timeout: 30_000 });
  const users = await page.getByTestId("user-row").count();
  expect(users).toBeGreaterThan(0);
  // Fewer than a page of users in this run: every one is shown and there is nothing older to load.
  expect(users).toBeLessThan(PAGE);
  await expect(page.getByTestId("shown-count")).toContainText(`${users} shown`);
  await expect(page.getByTestId("load-older-users")).toHaveCount(0);
});
