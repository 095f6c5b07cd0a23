import { readFileSync } from "node:fs";
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { addUser, bearer, demoCredentials, screenshot, signedInPage, startScript, uniqueMarker } from "./support";

/**
 * The Policy page (issue 34, points 2 and 3) over requests made and decided through the public API.
 * The e2e server has no agents file (the built-in agents): a suggestion comes with a file to
 * download instead of a diff, and cannot be applied. Every figure checked is one only this test's
 * requests (their arguments carry a marker) can move, or the public API's answer for the same
 * candidate, so other specs' requests in the same server change nothing.
 */

type TSimulation = {
  totals: Record<string, number>;
  rows: Array<{ agent: string; action: string; nowWithoutPerson: number; nowWithoutPersonDenied: number; nowWithoutPersonEdited: number }>;
  dangerous: Array<{ id: string }>;
};

/** A scripted run of a member asking to run `command`; returns its response and approval ids. */
async function ask(request: APIRequestContext, apiKey: string, command: string) {
  const run = await startScript(request, apiKey, { script: [{ toolCalls: [{ name: "exec", arguments: { command } }] }, { text: "done" }] });
  expect(run.requiredAction?.type).toBe("human_approval");
  return { responseId: run.id, approvalId: run.requiredAction?.id as string };
}

async function decide(request: APIRequestContext, apiKey: string, approvalId: string, decision: "approve" | "deny") {
  const res = await request.post(`/v1/approvals/${approvalId}`, { headers: bearer(apiKey), data: { decision } });
  expect(res.status(), await res.text()).toBe(200);
}

/** Puts the candidate in the form's text box and runs the simulation; waits for its answer. */
async function simulateText(page: Page, text: string) {
  await page.getByTestId("candidate-text").fill(text);
  await page.getByTestId("simulate").click();
}

test("policy simulation: a candidate letting a denied command through is the first row, in red, with its counts; the server's sentence for an invalid file; bad JSON never leaves the browser", async ({ browser, baseURL, request }) => {
  const creds = await demoCredentials();
  const admin = addUser("Petra Policy", "admin");
  const member = addUser("Sim Member", "member");
  const marker = uniqueMarker();
  // One request a person approved and one a person denied, both `echo sim-<marker>`.
  const approved = await ask(request, member.apiKey, `echo sim-${marker}`);
  await decide(request, creds.apiKey, approved.approvalId, "approve");
  const denied = await ask(request, member.apiKey, `echo sim-${marker}`);
  await decide(request, creds.apiKey, denied.approvalId, "deny");

  const page = await signedInPage(browser, baseURL, admin);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy" }).click();
  await expect(page).toHaveURL(/\/policy$/);
  await expect(page).toHaveTitle("Policy · Countersign");
  await expect(page.getByRole("heading", { level: 1, name: "Policy" })).toBeVisible();
  await expect(page.getByTestId("simulation-note")).toContainText("reviewer is not called");
  await expect(page.getByTestId("policy-read-only")).toHaveCount(0);
  const sent: string[] = [];
  page.on("request", (r) => {
    if (new URL(r.url()).pathname === "/api/trpc/policy.simulate") sent.push(r.url());
  });

  // Text that is not JSON, and a window out of range: refused in the browser, nothing sent.
  await simulateText(page, '{"agents": [');
  await expect(page.getByTestId("simulation-refusal")).toContainText("The candidate is not valid JSON");
  await expect(page.getByTestId("candidate-text")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("candidate-text")).toBeFocused();
  await page.getByTestId("candidate-text").fill('{"agents": []}');
  await page.getByTestId("simulation-days").fill("0");
  await page.getByTestId("simulate").click();
  await expect(page.getByTestId("simulation-refusal")).toContainText("whole number of days from 1 to 365");
  expect(sent).toEqual([]);
  await page.getByTestId("simulation-days").fill("14");

  // A candidate that lets exactly this test's command through without a person: the denied one is
  // the danger, on the first row, in red.
  const only = {
    builtins: true,
    agents: [
      {
        name: "scripted",
        harness: "scripted",
        tools: { exec: { approval: "always", predicates: [{ match: [{ argument: "command", regex: `^echo sim-${marker}$` }], approval: "never" }] }, echo: {} },
      },
    ],
  };
  await simulateText(page, JSON.stringify(only, null, 2));
  const result = page.getByTestId("simulation-result");
  await expect(result).toBeVisible();
  await expect(page.locator("#policy-result-title")).toBeFocused();
  const rows = result.getByTestId("sim-row");
  const first = rows.first();
  await expect(first).toHaveAttribute("data-agent", "scripted");
  await expect(first).toHaveAttribute("data-action", "tool:exec");
  await expect(first).toHaveAttribute("data-dangerous", "true");
  await expect(first).toHaveClass(/policy-danger/);
  await expect(first.locator("td").first()).toHaveCSS("background-color", "rgb(253, 231, 229)");
  await expect(first.getByTestId("sim-without")).toHaveText("2");
  await expect(first.getByTestId("sim-danger")).toHaveText("Would let through 1 request a person denied / 0 a person edited");
  await expect(result.locator('[data-testid="sim-row"][data-dangerous="true"]')).toHaveCount(1);
  await expect(result.getByTestId("sim-total-nowWithoutPerson").locator(".stat-value")).toHaveText("2");
  await expect(result.getByTestId("sim-total-nowWithoutPersonDenied").locator(".stat-value")).toHaveText("1");
  await expect(result.getByTestId("sim-total-nowWithoutPersonDenied")).toHaveClass(/policy-danger/);
  await expect(result.getByTestId("sim-total-nowWithoutPersonEdited").locator(".stat-value")).toHaveText("0");
  await expect(result.getByTestId("simulation-danger")).toHaveText("Would let through 1 request a person denied / 0 a person edited");
  // The dangerous request itself, its arguments on one line.
  const dangerous = result.getByTestId("sim-dangerous-row");
  await expect(dangerous).toHaveCount(1);
  await expect(dangerous).toHaveAttribute("data-request-id", denied.approvalId);
  await expect(dangerous).toHaveAttribute("data-outcome", "denied");
  await expect(dangerous).toContainText(`{"command":"echo sim-${marker}"}`);
  expect(sent).toHaveLength(1);
  await screenshot(page, "policy-simulation");

  // The file that lets every exec through, chosen as a file: the same figures as the public API's.
  const everyExec = { builtins: true, agents: [{ name: "scripted", harness: "scripted", tools: { exec: { approval: "never" }, echo: {} } }] };
  await page.getByTestId("candidate-file").setInputFiles({ name: "candidate.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(everyExec)) });
  await expect(page.getByTestId("candidate-loaded")).toContainText("candidate.json");
  await expect(page.getByTestId("candidate-text")).toHaveValue(JSON.stringify(everyExec));
  await page.getByTestId("simulate").click();
  await expect.poll(() => sent.length).toBe(2);
  await expect(result.getByTestId("sim-row").first()).toHaveAttribute("data-dangerous", "true");
  const api = await request.post("/v1/policy/simulate", { headers: bearer(admin.apiKey), data: { file: everyExec, days: 14 } });
  expect(api.status(), await api.text()).toBe(200);
  const answer = (await api.json()) as TSimulation;
  const exec = answer.rows[0];
  expect(exec).toMatchObject({ agent: "scripted", action: "tool:exec" });
  expect(exec?.nowWithoutPersonDenied).toBeGreaterThanOrEqual(1);
  await expect(result.getByTestId("sim-row").first()).toHaveAttribute("data-action", "tool:exec");
  await expect(result.getByTestId("sim-row").first().getByTestId("sim-danger")).toContainText(`a person denied / ${exec?.nowWithoutPersonEdited} a person edited`);
  await expect(result.getByTestId("sim-total-nowWithoutPersonDenied").locator(".stat-value")).toHaveText(String(answer.totals.nowWithoutPersonDenied));
  await expect(result.getByTestId("sim-total-nowWithoutPersonEdited").locator(".stat-value")).toHaveText(String(answer.totals.nowWithoutPersonEdited));
  await expect(result.getByTestId("sim-dangerous-row")).toHaveCount(answer.dangerous.length);

  // An invalid file: the server's sentence, naming each bad field, as it wrote it.
  const broken = { agents: [{ name: "broken", harness: "scripted", tools: { exec: { approval: "sometimes" }, echo: { approval: "maybe" } } }] };
  const refused = await request.post("/v1/policy/simulate", { headers: bearer(admin.apiKey), data: { file: broken, days: 14 } });
  expect(refused.status()).toBe(422);
  const { detail } = (await refused.json()) as { detail: string };
  expect(detail).toContain("agents[0].tools.exec.approval");
  expect(detail).toContain("agents[0].tools.echo.approval");
  await simulateText(page, JSON.stringify(broken));
  await expect(page.getByTestId("simulation-error")).toContainText("The server refused the candidate file:");
  await expect(page.getByTestId("server-sentence")).toHaveText(detail);
  await expect(page.getByTestId("simulation-result")).toHaveCount(0);
  await page.context().close();
});

test("rule suggestions: twenty approvals of one command by two people are an 'Ask less' card with a file to download; read-only for an operator, not for a member; an admin dismisses it for one window length", async ({
  browser,
  baseURL,
  request,
}) => {
  test.setTimeout(180_000);
  // The demo operator is an admin: its API key is the first approver, the other admin the second.
  const creds = await demoCredentials();
  const admin = addUser("Sam Suggest", "admin");
  const operator = addUser("Otto Operator", "operator");
  const member = addUser("Sug Member", "member");
  const marker = uniqueMarker();
  const command = `echo suggest-${marker}`;
  // The same command, approved as asked 20 times (COUNTERSIGN_SUGGEST_MIN_REQUESTS' default) by two people.
  let last = { responseId: "", approvalId: "" };
  for (let i = 0; i < 20; i++) {
    last = await ask(request, member.apiKey, command);
    await decide(request, i % 2 === 0 ? creds.apiKey : admin.apiKey, last.approvalId, "approve");
  }
  const cardOf = (p: Page) => p.getByTestId("suggestion").filter({ hasText: command });

  // An operator reads it: no Apply or Dismiss.
  const page = await signedInPage(browser, baseURL, operator);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy" }).click();
  await expect(page).toHaveURL(/\/policy$/);
  await expect(page.getByTestId("policy-read-only")).toBeVisible();
  const readOnly = cardOf(page);
  await expect(readOnly).toHaveCount(1);
  await expect(readOnly.getByTestId("download-agents-file")).toBeVisible();
  await expect(readOnly.getByTestId("dismiss-suggestion")).toHaveCount(0);
  await expect(readOnly.getByTestId("apply-suggestion")).toHaveCount(0);

  // A member: no Policy in the menu, and a sentence if it comes by the address.
  const memberPage = await signedInPage(browser, baseURL, member);
  await expect(memberPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics" })).toBeVisible();
  await expect(memberPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy" })).toHaveCount(0);
  await memberPage.goto("/policy");
  await expect(memberPage.getByTestId("policy-forbidden")).toContainText("for operators, auditors and admins");
  await expect(memberPage.getByTestId("policy-suggestions")).toHaveCount(0);
  await memberPage.context().close();

  // The admin's card: the evidence, the exact arguments, the requests behind it, why it cannot be applied here.
  const adminPage = await signedInPage(browser, baseURL, admin);
  await adminPage.goto("/policy");
  const card = cardOf(adminPage);
  await expect(card).toHaveCount(1);
  await expect(card).toHaveAttribute("data-kind", "loosen");
  await expect(card.getByTestId("suggestion-kind")).toHaveText("Ask less");
  await expect(card.getByRole("heading", { level: 3 })).toContainText("tool:exec");
  await expect(card.getByRole("heading", { level: 3 })).toContainText("scripted");
  await expect(card.getByTestId("suggestion-summary")).toContainText("20 of 20 approved as asked by 2 people");
  await expect(card.getByTestId("count-requests")).toHaveText("20");
  await expect(card.getByTestId("count-approved")).toHaveText("20");
  await expect(card.getByTestId("count-denied")).toHaveText("0");
  await expect(card.getByTestId("count-people")).toHaveText("2");
  await expect(card.getByTestId("suggestion-reason")).toContainText("no agents file");
  await expect(card.getByTestId("suggestion-diff")).toHaveCount(0);
  await expect(card.getByTestId("apply-suggestion")).toHaveCount(0);
  const latest = card.locator(`[data-testid="matched-request"][data-response-id="${last.responseId}"]`);
  await expect(latest.getByRole("link", { name: `Open response ${last.responseId}` })).toHaveAttribute("href", `/responses/${last.responseId}`);
  await screenshot(adminPage, "policy-suggestions");

  // The suggested file, saved as agents.json: the built-in agent with the rule first in exec's list.
  const download = adminPage.waitForEvent("download");
  await card.getByTestId("download-agents-file").click();
  const saved = await download;
  expect(saved.suggestedFilename()).toBe("agents.json");
  const file = JSON.parse(readFileSync(await saved.path(), "utf8")) as { agents: Array<{ name: string; tools: { exec: { predicates: Array<{ approval: string; match: Array<{ argument: string; regex: string }> }> } } }> };
  const exec = file.agents.find((a) => a.name === "scripted")?.tools.exec;
  expect(exec?.predicates[0]?.approval).toBe("never");
  expect(exec?.predicates[0]?.match).toEqual([{ argument: "command", regex: `^echo suggest-${marker}$` }]);

  // The window is the address.
  await adminPage.getByTestId("suggestions-window").selectOption("30");
  await expect(adminPage).toHaveURL(/\/policy\?days=30$/);
  await expect(cardOf(adminPage)).toHaveCount(1);
  await adminPage.reload();
  await expect(adminPage.getByTestId("suggestions-window")).toHaveValue("30");
  await adminPage.getByTestId("suggestions-window").selectOption("14");
  await expect(adminPage).toHaveURL(/\/policy$/);

  // Dismissed (two steps): gone from the 14-day window, still offered from a 30-day one.
  await card.getByTestId("dismiss-suggestion").click();
  await card.getByRole("button", { name: "Dismiss it" }).click();
  await expect(adminPage.getByTestId("suggestion-dismissed")).toContainText("Dismissed the suggestion for tool:exec (agent scripted)");
  await expect(cardOf(adminPage)).toHaveCount(0);
  await expect(adminPage.locator("#policy-suggestions-title")).toBeFocused();
  await adminPage.reload();
  await expect(adminPage.getByTestId("suggestions-list").or(adminPage.getByTestId("suggestions-empty"))).toBeVisible();
  await expect(cardOf(adminPage)).toHaveCount(0);
  await adminPage.goto("/policy?days=30");
  await expect(cardOf(adminPage)).toHaveCount(1);
  // The operator's page agrees once it asks again.
  await page.reload();
  await expect(page.getByTestId("suggestions-list").or(page.getByTestId("suggestions-empty"))).toBeVisible();
  await expect(cardOf(page)).toHaveCount(0);
  await page.context().close();
  await adminPage.context().close();
});
