import { expect, type Page, test } from "@playwright/test";
import { addUser, bearer, DEMO_OPERATOR, demoCredentials, screenshot, signedInPage, startScript, uniqueMarker } from "./support";

/**
 * The decision analytics page (issue 34, point 1) over requests made and decided through the public
 * API. A new member's figures are its own requests only, so the counts are exact whatever other
 * tests asked for; the demo operator's page checks what only a reader of everyone's requests has.
 */

/** A figure of the totals row ("requests", an outcome, "pending"). */
const total = (page: Page, key: string) => page.getByTestId(`total-${key}`).locator(".stat-value");

test("analytics: totals per outcome, an agent's figures, a day's bar lists its requests, each linking to its response", async ({ browser, baseURL, request }) => {
  const creds = await demoCredentials();
  const member = addUser("Ana Analytics", "member");
  const marker = uniqueMarker();
  const ask = async (command: string, agent = "scripted") => {
    const run = await startScript(request, member.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command } }] }, { text: "done" }] }, { agent });
    expect(run.requiredAction?.type).toBe("human_approval");
    return { responseId: run.id, approvalId: run.requiredAction?.id as string };
  };
  const decide = async (approvalId: string, decision: "approve" | "deny") => {
    const res = await request.post(`/v1/approvals/${approvalId}`, { headers: bearer(creds.apiKey), data: { decision } });
    expect(res.status(), await res.text()).toBe(200);
  };
  // The same command asked twice (approved, then denied), another agent's command approved, and an
  // echo the agent's policy lets through without asking anyone.
  const first = await ask(`echo repeat-${marker}`);
  await decide(first.approvalId, "approve");
  const second = await ask(`echo repeat-${marker}`);
  await decide(second.approvalId, "deny");
  const reviewed = await ask(`echo reviewed-${marker}`, "scripted-reviewed");
  await decide(reviewed.approvalId, "approve");
  const passed = await startScript(request, member.apiKey, { script: [{ toolCalls: [{ name: "echo", arguments: { text: marker } }] }, { text: "done" }] });
  expect(passed.status).toBe("completed");
  // Two requests nobody decided in time: a high-risk one, mailed to the approvers (the e2e
  // notification rules), and one that notified nobody.
  const expire = async (action: string, risk?: "high") => {
    const res = await request.post("/v1/approvals", { headers: bearer(member.apiKey), data: { action, arguments: { marker }, expiresInMs: 1000, ...(risk ? { risk } : {}) } });
    expect(res.status(), await res.text()).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await expect
      .poll(async () => ((await (await request.get(`/v1/approvals/${id}`, { headers: bearer(member.apiKey) })).json()) as { status: string }).status, { message: `approval ${id} did not expire`, timeout: 30_000 })
      .toBe("expired");
    return id;
  };
  const mailed = await expire("deploy:prod", "high");
  const unnoticed = await expire("deploy:staging");

  const page = await signedInPage(browser, baseURL, member);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics" }).click();
  await expect(page).toHaveURL(/\/analytics$/);
  await expect(page).toHaveTitle("Analytics · Countersign");
  await expect(page.getByRole("heading", { level: 1, name: "Decision analytics" })).toBeVisible();
  await expect(total(page, "requests")).toHaveText("6");
  await expect(total(page, "approved")).toHaveText("2");
  await expect(total(page, "denied")).toHaveText("1");
  await expect(total(page, "policy")).toHaveText("1");
  await expect(total(page, "expired")).toHaveText("2");
  await expect(total(page, "pending")).toHaveText("0");
  // A member filters by no approver; who decided its requests is still shown.
  await expect(page.getByTestId("analytics-approver")).toHaveCount(0);
  await expect(page.getByTestId("times-approver")).toContainText("Demo Operator");
  await expect(page.getByTestId("times-agent").getByTestId("times-row")).toHaveCount(2);
  // The repeated command: asked twice, approved once and denied once.
  const repeated = page.getByTestId("repeated-row").filter({ hasText: `repeat-${marker}` });
  await expect(repeated.getByTestId("repeated-link")).toHaveText("2 requests");
  await expect(repeated.locator('[data-outcome="approved"]')).toContainText("1");
  await expect(repeated.locator('[data-outcome="denied"]')).toContainText("1");
  // The expiries, and whom each was told to.
  const expiredRow = (id: string) => page.locator(`[data-testid="expired-row"][data-approval-id="${id}"]`);
  await expect(page.getByTestId("expired-row")).toHaveCount(2);
  await expect(expiredRow(mailed).getByTestId("notified")).toHaveText("operator@countersign.local");
  await expect(expiredRow(mailed)).toContainText("deploy:prod");
  await expect(expiredRow(unnoticed).getByTestId("notified")).toHaveText("Nobody was notified");
  await screenshot(page, "analytics");

  // One agent's figures; the filter is the address, so a reload keeps it.
  await page.getByTestId("analytics-agent").selectOption("scripted-reviewed");
  await expect(page).toHaveURL(/\/analytics\?agent=scripted-reviewed$/);
  await expect(total(page, "requests")).toHaveText("1");
  await expect(total(page, "approved")).toHaveText("1");
  await expect(total(page, "denied")).toHaveText("0");
  await expect(total(page, "policy")).toHaveText("0");
  await expect(page.getByTestId("times-agent").getByTestId("times-row")).toHaveCount(1);
  await page.reload();
  await expect(page.getByTestId("analytics-agent")).toHaveValue("scripted-reviewed");
  await expect(total(page, "requests")).toHaveText("1");
  await page.getByTestId("analytics-agent").selectOption("");
  await expect(total(page, "requests")).toHaveText("6");

  // The denied segment of today's bar: today's denied request is listed, and only it.
  const deniedBar = page.getByTestId("chart-per-day").locator('path[data-outcome="denied"]');
  await expect(deniedBar).toHaveCount(1);
  const day = (await deniedBar.getAttribute("data-day")) as string;
  expect(day).toMatch(/^\d{4}-\d\d-\d\d$/);
  await deniedBar.click();
  await expect(page).toHaveURL(`/analytics?outcome=denied&day=${day}`);
  const rows = page.getByTestId("analytics-request-row");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute("data-response-id", second.responseId);
  await expect(page.getByTestId("analytics-selection")).toContainText(`day ${day}`);
  await expect(page.getByTestId("analytics-selection")).toContainText("outcome: denied");
  await expect(total(page, "requests")).toHaveText("1");
  await screenshot(page, "analytics-day-selected");

  // Cleared, then from the keyboard: the per-day table's day lists all six of the day's requests.
  await page.getByTestId("clear-selection").click();
  await expect(page).toHaveURL(/\/analytics$/);
  await expect(page.getByTestId("analytics-selection")).toHaveCount(0);
  await page.getByTestId("per-day-table-toggle").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("per-day-table-toggle")).toHaveAttribute("aria-expanded", "true");
  await page.getByRole("link", { name: `Requests of ${day}`, exact: true }).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(`/analytics?day=${day}`);
  await expect(rows).toHaveCount(6);
  await expect(page.locator("#analytics-requests-title")).toBeFocused();
  for (const run of [first, second, reviewed]) await expect(rows.and(page.locator(`[data-response-id="${run.responseId}"]`))).toHaveCount(1);
  for (const id of [mailed, unnoticed]) await expect(rows.and(page.locator(`[data-request-id="${id}"][data-outcome="expired"]`))).toHaveCount(1);

  // The repeated request's link: its two asks.
  await repeated.getByTestId("repeated-link").click();
  await expect(page).toHaveURL(new RegExp(`/analytics\\?day=${day}&requestKey=[0-9a-f]{32}$`));
  await expect(rows).toHaveCount(2);
  await expect(page.getByTestId("analytics-selection")).toContainText("the repeated request tool:exec");
  // Back: the day alone again.
  await page.goBack();
  await expect(page).toHaveURL(`/analytics?day=${day}`);
  await expect(rows).toHaveCount(6);

  // A row's link opens the response behind it.
  await rows.and(page.locator('[data-outcome="denied"]')).getByRole("link", { name: `Open response ${second.responseId}` }).click();
  await expect(page).toHaveURL(`/responses/${second.responseId}`);
  await expect(page).toHaveTitle(`Response ${second.responseId} · Countersign`);

  // An outcome none of its requests had: the empty state.
  await page.goto("/analytics?outcome=cancelled");
  await expect(page.getByTestId("analytics-empty")).toContainText("No decided requests in this period");
  await expect(total(page, "requests")).toHaveText("0");
  await page.context().close();
});

test("analytics for a reader of everyone's requests: the approver filter, and the server's sentence when it refuses", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startScript(request, creds.apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo ${marker}` } }] }, { text: "done" }] });
  const decided = await request.post(`/v1/approvals/${run.requiredAction?.id}`, { headers: bearer(creds.apiKey), data: { decision: "approve" } });
  expect(decided.status()).toBe(200);

  // Each chart is a request of its own: the time-to-decide chart held back, the others are shown
  // (and it its skeleton) until it is let through.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const isTimes = (url: URL) => url.pathname === "/api/trpc/analytics.times";
  await page.route(isTimes, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto("/analytics");
  await expect(total(page, "approved")).not.toHaveText("0");
  await expect(page.getByTestId("repeated-row").first()).toBeVisible();
  await expect(page.getByTestId("analytics-expired").getByTestId("list-skeleton")).toHaveCount(0);
  await expect(page.getByTestId("analytics-times").getByTestId("list-skeleton")).toBeVisible();
  await expect(page.getByTestId("times-approver")).toHaveCount(0);
  release();
  await expect(page.getByTestId("times-approver")).toBeVisible();
  await expect(page.getByTestId("analytics-times").getByTestId("list-skeleton")).toHaveCount(0);
  await page.unroute(isTimes);

  await page.getByTestId("analytics-approver").selectOption({ label: DEMO_OPERATOR });
  await expect(page).toHaveURL(/\/analytics\?approver=[^&]+$/);
  // Only the requests a person decided, each by the demo operator; the approver's name filters again.
  await expect(total(page, "policy")).toHaveText("0");
  await page.getByTestId("total-approved").click();
  await expect(page).toHaveURL(/outcome=approved/);
  const rows = page.getByTestId("analytics-request-row");
  await expect(rows.first()).toBeVisible();
  await expect(rows.filter({ hasNotText: "Demo Operator" })).toHaveCount(0);
  await expect(rows.and(page.locator('[data-outcome]:not([data-outcome="approved"])'))).toHaveCount(0);
  await expect(rows.and(page.locator(`[data-response-id="${run.id}"]`))).toHaveCount(1);
  await expect(page.getByTestId("times-approver").getByRole("link", { name: "Demo Operator" })).toHaveAttribute("aria-current", "true");

  // A value the server refuses (an agent name longer than any): its sentence, not raw JSON, from
  // each chart on its own (totals and days, time to decide, repeated, expired) and the requests' list.
  await page.goto(`/analytics?agent=${"x".repeat(80)}`);
  const alerts = page.getByRole("alert").and(page.getByTestId("list-error"));
  await expect(alerts).toHaveCount(5);
  for (const alert of await alerts.all()) {
    await expect(alert).toContainText("The page was not accepted");
    await expect(alert).not.toContainText("{");
  }
});
