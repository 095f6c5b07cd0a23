import { expect, test } from "@playwright/test";
import { addUser, bearer, demoCredentials, screenshot, startEchoRun, startScript, uniqueMarker } from "./support";

test("responses and sessions: searchable, filtered on the server, paged", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const waiting = await startEchoRun(request, creds.apiKey, marker);
  const done = await startScript(request, creds.apiKey, { script: [{ text: `All good ${marker}`, usage: { outputTokens: 42 } }] });
  expect(done.status).toBe("completed");

  await page.goto("/responses");
  const row = (id: string) => page.locator(`[data-testid="response-row"][data-response-id="${id}"]`);
  await expect(row(waiting.responseId)).toBeVisible();
  await expect(row(done.id)).toContainText("42");
  // Status filter.
  await page.getByTestId("filter-status").getByRole("button", { name: "waiting" }).click();
  await expect(row(waiting.responseId)).toBeVisible();
  await expect(row(done.id)).toHaveCount(0);
  await expect(page.locator('[data-testid="response-row"] [data-testid="status"]:not([data-status="requires_action"])')).toHaveCount(0);
  await page.getByTestId("filter-status").getByRole("button", { name: "waiting" }).click();
  // Search the input text.
  await page.getByTestId("filter-search").fill(`All good ${marker}`);
  await expect(row(done.id)).toBeVisible();
  await expect(page.getByTestId("response-row")).toHaveCount(1);
  // A time range that ends before these runs finds neither.
  await page.getByTestId("filter-search").fill(marker);
  await expect(page.getByTestId("response-row")).toHaveCount(2);
  await page.getByTestId("filter-to").fill("2020-01-01T00:00");
  await expect(page.getByTestId("response-row")).toHaveCount(0);
  await page.getByTestId("filter-to").fill("");
  await page.getByTestId("filter-agent").selectOption("scripted");
  await expect(page.getByTestId("response-row")).toHaveCount(2);
  await screenshot(page, "responses-filtered");

  // Keyset paging: "Load older" appends the next page.
  await page.getByTestId("filter-search").fill("");
  await page.getByTestId("filter-agent").selectOption("");
  for (let i = 0; i < 3; i++) await startScript(request, creds.apiKey, "page filler");
  await page.reload();
  const shown = await page.getByTestId("response-row").count();
  if (await page.getByTestId("load-more").isVisible()) {
    await page.getByTestId("load-more").click();
    await expect.poll(() => page.getByTestId("response-row").count()).toBeGreaterThan(shown);
  }

  // Sessions: the waiting run's session is active; its page shows its responses and trajectory.
  await page.goto("/sessions");
  await page.getByTestId("filter-state").selectOption("active");
  const session = page.locator(`[data-testid="session-row"][data-session-id="${waiting.sessionId}"]`);
  await expect(session).toBeVisible();
  await expect(session).toContainText("1 active");
  await expect(page.locator(`[data-testid="session-row"][data-session-id="${done.sessionId}"]`)).toHaveCount(0);
  await screenshot(page, "sessions-list");
  await session.getByRole("link", { name: waiting.sessionId }).click();
  await expect(page).toHaveURL(`/sessions/${waiting.sessionId}`);
  await expect(page.getByTestId("session-responses")).toContainText(waiting.responseId);
  await expect(page.getByTestId("trajectory-event").filter({ hasText: "approval.requested" })).toBeVisible();
  await screenshot(page, "session-detail");
  await request.post(`/v1/responses/${waiting.responseId}/cancel`, { headers: bearer(creds.apiKey) });
});

test("usage: output tokens per agent, user and day as charts and a table", async ({ page, request }) => {
  const creds = await demoCredentials();
  await startScript(request, creds.apiKey, { script: [{ text: "Counting", usage: { outputTokens: 120 } }, { text: "more" }] });
  await startScript(request, creds.apiKey, { script: [{ text: "Counting", usage: { outputTokens: 30 } }] }, { agent: "scripted-reviewed" });
  await page.goto("/usage");
  await expect(page.getByRole("heading", { name: "Usage", level: 1 })).toBeVisible();
  await expect(page.getByTestId("usage-table")).toContainText("scripted-reviewed");
  const total = Number((await page.getByTestId("usage-total").textContent())?.replace(/,/g, ""));
  expect(total).toBeGreaterThanOrEqual(150);
  await expect(page.getByTestId("chart-per-day").locator(".recharts-bar-rectangle").first()).toBeVisible();
  await expect(page.getByTestId("chart-per-user")).toContainText("Demo Operator");
  await screenshot(page, "usage");
  await page.getByTestId("usage-agent").selectOption("scripted-reviewed");
  await expect(page.getByTestId("usage-row").first()).toContainText("scripted-reviewed");
  await expect(page.getByTestId("usage-row").filter({ hasNotText: "scripted-reviewed" })).toHaveCount(0);
});

test("admin: users and roles, API keys shown once and revoked, agents and policies, paired devices", async ({ page, request }) => {
  const newcomer = addUser("Nora Newcomer", "member");
  await page.goto("/admin");
  await expect(page.getByRole("tab", { name: "Users & roles" })).toHaveAttribute("aria-selected", "true");
  const userRow = page.locator(`[data-testid="user-row"][data-user-id="${newcomer.userId}"]`);
  await expect(userRow).toContainText("Nora Newcomer");
  await userRow.getByRole("combobox", { name: "Role of Nora Newcomer" }).selectOption("operator");
  await expect(userRow.getByRole("combobox")).toHaveValue("operator");
  const me = await request.get("/api/trpc/me", { headers: bearer(newcomer.apiKey) });
  expect(((await me.json()) as { result: { data: { role: string } } }).result.data.role).toBe("operator");
  await screenshot(page, "admin-users");

  // API keys: created keys are shown once, work, and stop working once revoked.
  await page.getByRole("tab", { name: "API keys" }).click();
  await page.getByLabel("New key name").fill("e2e pipeline");
  await page.getByRole("button", { name: "Create key" }).click();
  const value = (await page.getByTestId("new-key-value").textContent()) ?? "";
  expect(value).toMatch(/^cs_/);
  expect((await request.get("/api/trpc/me", { headers: bearer(value) })).status()).toBe(200);
  await screenshot(page, "admin-keys");
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("new-key")).toHaveCount(0);
  const keyRow = page.getByTestId("key-row").filter({ hasText: "e2e pipeline" });
  await expect(keyRow).toContainText(value.slice(0, 10));
  await keyRow.getByRole("button", { name: /Revoke key e2e pipeline/ }).click();
  await keyRow.getByRole("button", { name: "Yes, revoke" }).click();
  await expect(keyRow).toContainText("revoked");
  expect((await request.get("/api/trpc/me", { headers: bearer(value) })).status()).toBe(401);

  // Agents: read-only, with the approval policy per tool, reviewer and expiry times.
  await page.getByRole("tab", { name: "Agents & policies" }).click();
  const reviewed = page.locator('[data-testid="agent-card"][data-agent="scripted-reviewed"]');
  await expect(reviewed.getByTestId("agent-tools")).toContainText("exec");
  await expect(reviewed.getByTestId("agent-tools")).toContainText("review");
  await expect(reviewed).toContainText("Approval expires after");
  await expect(reviewed).toContainText("15m 00s");
  await expect(page.locator('[data-testid="agent-card"][data-agent="scripted"]').getByTestId("agent-tools")).toContainText("always");
  await screenshot(page, "admin-agents");

  // Devices: a pairing token (shown once), then revoke it.
  await page.getByRole("tab", { name: "Paired devices" }).click();
  const name = `e2e-${uniqueMarker().slice(4, 14)}`;
  await page.getByLabel("New device name").fill(name);
  await page.getByRole("button", { name: "Create pairing token" }).click();
  await expect(page.getByTestId("pairing-token")).toContainText("cspair_");
  const device = page.getByTestId("device-row").filter({ hasText: name });
  await expect(device).toContainText("pending");
  await screenshot(page, "admin-devices");
  await device.getByRole("button", { name: "Revoke" }).click();
  await expect(device).toContainText("revoked");
});
