import { execFileSync } from "node:child_process";
import { type Browser, expect, type Page, test } from "@playwright/test";
import {
  bearer,
  completedToolResult,
  DEMO_OPERATOR,
  demoCredentials,
  gateway,
  getEnvelope,
  personText,
  SIGNED_OUT,
  screenshot,
  screenshotBoth,
  signIn,
  startQuestionRun,
  uniqueMarker,
} from "./support";

/** The ask_user call of the brief, with a marker in its text so lists can be filtered. */
const askEnv = (marker: string) => ({
  name: "ask_user",
  arguments: { questions: [{ id: "env", header: "Env", question: `Which environment? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
});

const FORM_SCHEMA = {
  type: "object",
  properties: {
    replicas: { type: "integer", minimum: 1 },
    region: { type: "string", enum: ["eu", "us"] },
    dry_run: { type: "boolean", default: true },
    password: { type: "string", format: "password" },
  },
  required: ["replicas", "region"],
};

/** Presses Tab until the element is focused (keyboard-only navigation), failing after `max` presses. */
async function tabTo(page: Page, target: ReturnType<Page["locator"]>, max = 15): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press("Tab");
  }
  await expect(target).toBeFocused();
}

/** Adds a second console user through the CLI (it reaches the running server's data directory). */
function addOperator(name: string): { userId: string; apiKey: string } {
  const email = `rival-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}@countersign.local`;
  const out = execFileSync("npx", ["tsx", "server/cli/main.ts", "user", "add", name, "--role", "operator", "--email", email, "--json"], {
    env: { ...process.env, COUNTERSIGN_DATA_DIR: ".data-e2e", DATABASE_URL: "", LOG_LEVEL: "warn" },
    encoding: "utf8",
  });
  const line = out.trim().split("\n").pop() ?? "{}";
  return JSON.parse(line) as { userId: string; apiKey: string };
}

async function tokenPage(browser: Browser, baseURL: string | undefined, path: string, apiKey: string): Promise<Page> {
  const context = await browser.newContext({ storageState: SIGNED_OUT, baseURL });
  const page = await context.newPage();
  await page.goto(`${path}?access_token=${encodeURIComponent(apiKey)}`);
  return page;
}

test("single choice, keyboard only: the answer reaches the run, which completes", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startQuestionRun(request, creds.apiKey, askEnv(marker));

  await page.goto(`/answer/${run.questionId}`);
  const card = page.getByTestId("answer-card");
  await expect(page.getByRole("heading", { level: 1, name: "A question for you" })).toBeVisible();
  await expect(page.getByTestId("answering-as")).toContainText("Demo Operator");
  await expect(card.getByTestId("question-kind")).toHaveText("Single choice");
  await expect(card.getByTestId("expiry")).toContainText(/expires in \d+m/);
  await expect(card).toContainText("Asked by Demo Operator");
  await expect(page.getByRole("link", { name: "View the response" })).toHaveAttribute("href", `/responses/${run.responseId}`);
  const group = page.getByRole("group", { name: /Which environment\?/ });
  await expect(group).toContainText(marker);
  await expect(group.getByRole("radio")).toHaveCount(3);
  await expect(group.getByRole("radio", { name: "Other…" })).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");
  await screenshotBoth(page, "answer-single-choice");

  // Keyboard alone: Tab into the radio group; Enter with nothing chosen explains what is missing.
  const staging = group.getByRole("radio", { name: "staging" });
  await tabTo(page, staging);
  const focusRing = await group.locator(".choice", { has: page.getByRole("radio", { name: "staging" }) }).evaluate((el) => getComputedStyle(el).boxShadow);
  expect(focusRing, "the focused choice shows a focus ring").not.toBe("none");
  await page.keyboard.press("Enter");
  await expect(group.getByTestId("field-error")).toHaveText("Choose one.");
  await expect(staging).toHaveAttribute("aria-invalid", "true");
  await page.keyboard.press("ArrowDown");
  await expect(group.getByRole("radio", { name: "prod" })).toBeChecked();
  await page.keyboard.press("Enter");

  const outcome = page.getByTestId("outcome");
  await expect(outcome).toHaveAttribute("data-status", "answered");
  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
  await expect(page.getByTestId("outcome-title")).toBeFocused();
  await expect(outcome.getByTestId("answer-value")).toHaveText("prod");
  await expect(outcome).toContainText("via console");
  await expect(page.getByTestId("sent-notice")).toContainText("your answer was sent");
  await expect(page.getByTestId("answer-form")).toHaveCount(0);
  await screenshotBoth(page, "answer-single-choice-answered");

  expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { env: ["prod"] } });
  const envelope = await getEnvelope(request, creds.apiKey, run);
  expect(envelope.outputText).toContain("done");
});

test("multiple choice with an Other… answer", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: {
      questions: [
        {
          id: "regions",
          header: "Regions",
          question: `Where should it deploy? (${marker})`,
          multiSelect: true,
          options: [
            { label: "eu-west", description: "Ireland" },
            { label: "us-east", description: "Virginia" },
            { label: "ap-south", description: "Mumbai" },
          ],
        },
      ],
    },
  });

  await page.goto(`/answer/${run.questionId}`);
  const group = page.getByRole("group", { name: /Where should it deploy\?/ });
  await expect(page.getByTestId("question-kind")).toHaveText("Multiple choice");
  await expect(group.getByRole("checkbox")).toHaveCount(4);
  await expect(group).toContainText("Choose all that apply.");
  await expect(group).toContainText("Virginia");
  await screenshotBoth(page, "answer-multi-choice");

  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(group.getByTestId("field-error")).toHaveText("Choose at least one.");
  await group.getByRole("checkbox", { name: /eu-west/ }).check();
  await group.getByRole("checkbox", { name: /ap-south/ }).check();
  await group.getByRole("checkbox", { name: "Other…" }).check();
  // Other… chosen but left empty: asked to type it.
  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(group.getByTestId("field-error")).toContainText("Type your other answer");
  await group.getByLabel("Your other answer").fill("sa-east");
  await expect(group.getByTestId("field-error")).toHaveCount(0);
  await screenshotBoth(page, "answer-multi-choice-filled");
  await page.getByRole("button", { name: "Send answer" }).click();

  const values = page.getByTestId("outcome").getByTestId("answer-value");
  await expect(values).toHaveText(["eu-west", "ap-south", "Other: sa-east"]);
  expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { regions: ["eu-west", "ap-south", "sa-east"] } });
});

test("free text: Enter sends, Shift+Enter keeps a new line", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "notes", header: "Notes", question: `Anything the deploy should know? (${marker})`, options: [] }] },
  });

  await page.goto(`/answer/${run.questionId}`);
  await expect(page.getByTestId("question-kind")).toHaveText("Free text");
  const box = page.getByRole("textbox", { name: "Your answer" });
  await expect(box).toBeVisible();
  await screenshotBoth(page, "answer-free-text");
  await box.focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("field-error")).toHaveText("Enter your answer.");
  await expect(box).toBeFocused();
  await page.keyboard.type("Ship it");
  await page.keyboard.press("Shift+Enter");
  await page.keyboard.type("after 5pm");
  await expect(box).toHaveValue("Ship it\nafter 5pm");
  await page.keyboard.press("Enter");

  await expect(page.getByTestId("outcome").getByTestId("answer-value")).toHaveText("Ship it\nafter 5pm");
  expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { notes: ["Ship it\nafter 5pm"] } });
});

test("a secret stays masked, is never shown again, and the record says stored", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startQuestionRun(request, creds.apiKey, { name: "request_secret", arguments: { name: "token", prompt: "Paste the deploy token" } });
  const secret = `tok-${uniqueMarker()}`;

  await page.goto(`/answer/${run.questionId}`);
  await expect(page.getByRole("heading", { level: 1, name: "A secret is requested" })).toBeVisible();
  await expect(page.getByRole("group", { name: /Paste the deploy token/ })).toBeVisible();
  const input = page.getByLabel("Secret value");
  await expect(input).toHaveAttribute("type", "password");
  await expect(input).toHaveAttribute("autocomplete", "off");
  await input.fill(secret);
  const toggle = page.getByRole("button", { name: "Show the value" });
  await expect(toggle).toHaveAttribute("aria-controls", (await input.getAttribute("id")) as string);
  await screenshotBoth(page, "answer-secret");
  await toggle.click();
  await expect(input).toHaveAttribute("type", "text");
  await expect(input).toHaveValue(secret);
  await page.getByRole("button", { name: "Hide the value" }).click();
  await expect(input).toHaveAttribute("type", "password");
  await input.press("Enter");

  const outcome = page.getByTestId("outcome");
  await expect(outcome).toHaveAttribute("data-status", "answered");
  await expect(outcome.getByTestId("stored-secret")).toContainText("stored");
  await expect(page.locator("body")).not.toContainText(secret);
  expect(await page.locator("input").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).not.toContain(secret);
  await screenshotBoth(page, "answer-secret-stored");

  const record = await gateway<{ question: { answers: Record<string, string[]> } }>(request, creds.apiKey, "question.get", { id: run.questionId });
  expect(record.question.answers).toEqual({ token: ["stored"] });
  const result = (await completedToolResult(request, creds.apiKey, run, "request_secret")) as Record<string, unknown>;
  expect(result).toMatchObject({ status: "answered", stored: true });
  expect(JSON.stringify(result)).not.toContain(secret);
  // A reload shows the same: only "stored".
  await page.reload();
  await expect(page.getByTestId("stored-secret")).toContainText("stored");
  await expect(page.locator("body")).not.toContainText(secret);
});

test("a schema form shows inline validation before a good submit", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startQuestionRun(request, creds.apiKey, { name: "request_input", arguments: { schema: FORM_SCHEMA } });
  const password = `pw-${uniqueMarker()}`;

  await page.goto(`/answer/${run.questionId}`);
  await expect(page.getByRole("heading", { level: 1, name: "Fill in a form" })).toBeVisible();
  await expect(page.getByTestId("question-kind")).toHaveText("Form");
  const replicas = page.getByRole("textbox", { name: /replicas/ });
  const region = page.getByRole("combobox", { name: /region/ });
  const dryRun = page.getByRole("checkbox", { name: "dry_run" });
  const pw = page.getByLabel(/^password/);
  await expect(replicas).toHaveAttribute("aria-required", "true");
  await expect(page.locator('label[for] .req')).toHaveCount(2);
  await expect(dryRun).toBeChecked();
  await expect(pw).toHaveAttribute("type", "password");
  await expect(pw).toHaveAttribute("autocomplete", "off");
  await screenshotBoth(page, "answer-form");

  await replicas.fill("0");
  await page.getByRole("button", { name: "Submit" }).click();
  const replicasField = page.locator('[data-field="replicas"]');
  const regionField = page.locator('[data-field="region"]');
  await expect(replicasField.getByTestId("field-error")).toHaveText("Must be at least 1.");
  await expect(regionField.getByTestId("field-error")).toHaveText("Choose one of the options.");
  await expect(replicas).toHaveAttribute("aria-invalid", "true");
  await expect(region).toHaveAttribute("aria-invalid", "true");
  // Focus moves to the first field to fix.
  await expect(page.locator("form :focus")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("outcome")).toHaveCount(0);
  await screenshotBoth(page, "answer-form-errors");

  await replicas.fill("2.5");
  await expect(replicasField.getByTestId("field-error")).toHaveText("Enter a whole number.");
  await replicas.fill("3");
  await expect(replicasField.getByTestId("field-error")).toHaveCount(0);
  await region.selectOption("eu");
  await expect(regionField.getByTestId("field-error")).toHaveCount(0);
  await pw.fill(password);
  await pw.press("Enter");

  const outcome = page.getByTestId("outcome");
  await expect(outcome).toHaveAttribute("data-status", "answered");
  for (const shown of ["replicas: 3", "region: eu", "dry_run: Yes"]) await expect(outcome.locator("dd", { hasText: shown })).toHaveCount(1);
  await expect(outcome.locator("dd", { hasText: "password:" }).getByTestId("stored-secret")).toContainText("stored");
  await expect(page.locator("body")).not.toContainText(password);
  await screenshotBoth(page, "answer-form-answered");
  expect(await completedToolResult(request, creds.apiKey, run, "request_input")).toEqual({
    outcome: "answered",
    values: { replicas: 3, region: "eu", dry_run: true, password: "stored" },
  });
});

test("Decline on a form cancels the question and the agent is told it was declined", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startQuestionRun(request, creds.apiKey, { name: "request_input", arguments: { schema: FORM_SCHEMA, title: "Scale" } });

  await page.goto(`/answer/${run.questionId}`);
  await page.getByRole("button", { name: "Decline" }).click();
  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByTestId("outcome-title")).toHaveText(`Declined by ${DEMO_OPERATOR}`);
  await expect(page.getByTestId("sent-notice")).toHaveText("You declined. The agent has been told.");
  expect(await completedToolResult(request, creds.apiKey, run, "request_input")).toEqual({ outcome: "declined" });
});

test("a literal URL is shown exactly, host emphasized, and is not a link until confirmed", async ({ page, request }) => {
  const creds = await demoCredentials();
  const url = "https://example.com/deploy?x=1";
  const run = await startQuestionRun(request, creds.apiKey, { name: "confirm_url", arguments: { url, reason: "Open the deploy page?" } });

  await page.goto(`/answer/${run.questionId}`);
  await expect(page.getByRole("heading", { level: 1, name: "Confirm a link" })).toBeVisible();
  await expect(page.getByRole("group", { name: /Open the deploy page\?/ })).toBeVisible();
  const literal = page.getByTestId("literal-url");
  await expect(literal).toHaveText(url);
  await expect(literal.locator("strong")).toHaveText("example.com");
  expect(await literal.evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/mono|Menlo|Consolas/i);
  await expect(page.getByTestId("url-hostname")).toHaveText("example.com");
  await expect(page.locator('a[href*="example.com"]')).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Confirm" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Decline" })).toBeVisible();
  await screenshotBoth(page, "answer-url");

  await page.getByRole("button", { name: "Confirm" }).focus();
  await page.keyboard.press("Enter");
  const outcome = page.getByTestId("outcome");
  await expect(outcome).toHaveAttribute("data-status", "answered");
  await expect(outcome.getByTestId("answer-value")).toHaveText("Confirmed");
  await expect(page.getByRole("link", { name: "Open the confirmed link" })).toHaveAttribute("href", url);
  await screenshotBoth(page, "answer-url-confirmed");
  expect(await completedToolResult(request, creds.apiKey, run, "confirm_url")).toEqual({ outcome: "confirmed", url });
});

test("a gateway question can ask several kinds at once; option values and form keys are sent", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const asked = await gateway<{ id: string }>(request, creds.apiKey, "question.request", {
    questions: [
      {
        questionId: "target",
        header: "Target",
        question: `Which cluster? (${marker})`,
        options: [
          { label: "Blue", value: "blue", description: "Serving today" },
          { label: "Green", value: "green", description: "Idle" },
        ],
      },
      { questionId: "runbook", header: "Runbook", question: "Open the runbook?", url: "https://runbook.example.org/deploy#step-2" },
      {
        questionId: "limits",
        header: "Limits",
        question: "Set the limits.",
        presentation: "form",
        fields: [
          { name: "cpu", label: "CPU cores", description: "Per replica.", type: "number", minimum: 0.5, maximum: 8, required: true },
          { name: "note", label: "Note", type: "string", maxLength: 20 },
        ],
      },
    ],
  });

  await page.goto(`/answer/${asked.id}`);
  await expect(page.getByRole("heading", { level: 1, name: "3 questions for you" })).toBeVisible();
  await expect(page.getByTestId("question-kind")).toHaveText("Single choice + Link confirmation + Form");
  await expect(page.getByRole("link", { name: "View the response" })).toHaveCount(0);
  await expect(page.getByTestId("literal-url")).toHaveText("https://runbook.example.org/deploy#step-2");
  await expect(page.getByTestId("literal-url").locator("strong")).toHaveText("runbook.example.org");
  await screenshotBoth(page, "answer-several");

  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(page.getByTestId("field-error")).toHaveText(["Choose one.", "Confirm or decline the link.", "This field is required."]);
  await page.getByRole("radio", { name: /Green/ }).check();
  await page.getByRole("radio", { name: "Confirm: open this link" }).check();
  await page.getByRole("textbox", { name: /CPU cores/ }).fill("2");
  await page.getByRole("textbox", { name: "Note" }).fill("x".repeat(21));
  await expect(page.getByTestId("field-error")).toHaveText("Use at most 20 characters (now 21).");
  await page.getByRole("textbox", { name: "Note" }).fill("canary first");
  await page.getByRole("button", { name: "Send answer" }).click();

  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
  const record = await gateway<{ question: { answers: Record<string, string[]> } }>(request, creds.apiKey, "question.get", { id: asked.id });
  expect(record.question.answers).toEqual({ target: ["green"], runbook: ["confirm"], "limits.cpu": ["2"], "limits.note": ["canary first"] });
  await expect(page.getByTestId("outcome").getByTestId("answer-value")).toHaveText(["Green", "Confirmed", "2", "canary first"]);
});

test("an expired question shows its expired state, live and after a reload", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const questions = [{ questionId: "go", header: "Go?", question: `Proceed with the rollout? (${marker})`, options: [{ label: "yes" }, { label: "no" }] }];

  // Opened after it expired.
  const late = await gateway<{ id: string; expiresAtMs: number }>(request, creds.apiKey, "question.request", { questions, timeoutMs: 1500 });
  await page.waitForTimeout(Math.max(0, late.expiresAtMs - Date.now()) + 1500);
  await page.goto(`/answer/${late.id}`);
  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "expired");
  await expect(page.getByTestId("outcome-title")).toHaveText("Expired: nobody answered in time");
  await expect(page.getByTestId("answer-form")).toHaveCount(0);
  await expect(page.getByTestId("expiry")).toHaveCount(0);
  await screenshotBoth(page, "answer-expired");

  // Open while it runs out: the form closes by itself.
  const live = await gateway<{ id: string }>(request, creds.apiKey, "question.request", { questions, timeoutMs: 4000 });
  await page.goto(`/answer/${live.id}`);
  await expect(page.getByTestId("answer-form")).toBeVisible();
  await expect(page.getByTestId("expiry")).toContainText(/expires in \ds/);
  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "expired", { timeout: 15_000 });
  await expect(page.getByTestId("answer-form")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "expired");
  const record = await gateway<{ question: { status: string } }>(request, creds.apiKey, "question.get", { id: live.id });
  expect(record.question.status).toBe("expired");
});

test.describe("without a console session", () => {
  test.use({ storageState: SIGNED_OUT });

  test("the page asks to sign in and comes back to the question", async ({ page, request }) => {
    const creds = await demoCredentials();
    const run = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));

    await page.goto(`/answer/${run.questionId}`);
    const prompt = page.getByTestId("sign-in-prompt");
    await expect(prompt.getByRole("heading", { name: "Sign in to answer" })).toBeVisible();
    const link = prompt.getByRole("link", { name: "Sign in to answer" });
    await expect(link).toHaveAttribute("href", `/login?next=${encodeURIComponent(`/answer/${run.questionId}`)}`);
    await screenshotBoth(page, "answer-sign-in");
    await link.click();
    await expect(page).toHaveURL(/\/login\?next=/);
    await signIn(page, creds);
    await expect(page).toHaveURL(`/answer/${run.questionId}`);
    await expect(page.getByRole("group", { name: /Which environment\?/ })).toBeVisible();
  });

  test("?access_token= is exchanged for a cookie of that question; the page answers with it and follows changes by polling", async ({ page, request }) => {
    const creds = await demoCredentials();
    const run = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));
    expect((await page.context().cookies()).length).toBe(0);

    // After the exchange the page never sends the key again, in a URL, a header or a body.
    const carryingKey: string[] = [];
    page.on("request", (r) => {
      if (r.isNavigationRequest() && r.redirectedFrom() === null && r.url().includes("access_token=")) return;
      if (`${r.url()} ${JSON.stringify(r.headers())} ${r.postData() ?? ""}`.includes(creds.apiKey)) carryingKey.push(r.url());
    });
    await page.goto(`/answer/${run.questionId}?access_token=${encodeURIComponent(creds.apiKey)}`);
    await expect(page).toHaveURL(`/answer/${run.questionId}`);
    await expect(page.getByTestId("answering-as")).toContainText("Demo Operator");
    await expect(page.getByTestId("answering-as")).toContainText("link access");
    await expect(page.getByRole("group", { name: /Which environment\?/ })).toBeVisible();
    // No console links for a link visitor.
    await expect(page.getByRole("link", { name: "View the response" })).toHaveCount(0);
    expect(await page.locator('meta[name="referrer"]').getAttribute("content")).toBe("no-referrer");
    await screenshotBoth(page, "answer-access-token");

    await page.getByRole("radio", { name: "staging" }).check();
    const resolved = page.waitForResponse((r) => r.url().includes("question.resolve"));
    await page.getByRole("button", { name: "Send answer" }).click();
    const resolveReq = (await resolved).request();
    expect(resolveReq.headers().authorization).toBeUndefined();
    expect(resolveReq.postData() ?? "").toMatch(/"resolutionId":"[0-9a-f-]{32,36}"/);
    await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
    expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { env: ["staging"] } });

    // Answered elsewhere (over HTTP) while the token page is open: it updates without a reload.
    const other = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));
    await page.goto(`/answer/${other.questionId}?access_token=${encodeURIComponent(creds.apiKey)}`);
    await expect(page.getByTestId("answer-form")).toBeVisible();
    await gateway(request, creds.apiKey, "question.resolve", { id: other.questionId, answers: { env: ["prod"] } });
    await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`, { timeout: 8_000 });
    await expect(page.getByTestId("outcome")).toContainText("via HTTP API");

    // A bad token: a clear message and a way to sign in instead (the other question's cookie does not count).
    const third = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));
    await page.goto(`/answer/${third.questionId}?access_token=not-a-real-key`);
    await expect(page).toHaveURL(`/answer/${third.questionId}?link=invalid`);
    await expect(page.getByTestId("sign-in-prompt")).toContainText("This link no longer works");
    expect(carryingKey).toEqual([]);
  });
});

test("two people answer at once: one wins, the other sees who answered", async ({ page, request, browser, baseURL }) => {
  const creds = await demoCredentials();
  const rival = addOperator("Rival Operator");
  const run = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));

  await page.goto(`/answer/${run.questionId}`);
  const rivalPage = await tokenPage(browser, baseURL, `/answer/${run.questionId}`, rival.apiKey);
  await expect(rivalPage.getByTestId("answering-as")).toContainText("Rival Operator");
  await page.getByRole("radio", { name: "staging" }).check();
  await rivalPage.getByRole("radio", { name: "prod" }).check();
  await Promise.all([page.getByRole("button", { name: "Send answer" }).click(), rivalPage.getByRole("button", { name: "Send answer" }).click()]);

  await expect.poll(async () => (await gateway<{ question: { status: string } }>(request, creds.apiKey, "question.get", { id: run.questionId })).question.status).toBe("answered");
  const record = await gateway<{ question: { answeredBy: { name: string; email: string }; answers: Record<string, string[]> } }>(request, creds.apiKey, "question.get", { id: run.questionId });
  expect(["Demo Operator", "Rival Operator"]).toContain(record.question.answeredBy.name);
  // The console names the winner with the email beside the name.
  const winnerName = personText(record.question.answeredBy.name, record.question.answeredBy.email);
  const [winner, loser] = record.question.answeredBy.name === "Demo Operator" ? [page, rivalPage] : [rivalPage, page];

  await expect(winner.getByTestId("outcome-title")).toHaveText(`Answered by ${winnerName}`);
  await expect(winner.getByTestId("sent-notice")).toBeVisible();
  await expect(winner.getByTestId("race-notice")).toHaveCount(0);
  await expect(loser.getByTestId("race-notice")).toHaveText(`Already answered by ${winnerName}. Your answer was not used.`);
  await expect(loser.getByTestId("outcome-title")).toHaveText(`Answered by ${winnerName}`);
  const winningValue = record.question.answers.env?.[0];
  await expect(loser.getByTestId("outcome").getByTestId("answer-value")).toHaveText(winningValue as string);
  await screenshotBoth(loser, "answer-race-lost");

  // The run got exactly the winning answer.
  expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { env: [winningValue] } });
  await rivalPage.context().close();
});

test("the console lists pending questions live and settled ones with who answered", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();

  await page.goto("/questions");
  await expect(page.getByRole("heading", { name: "Questions", level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: /^Questions/ })).toHaveAttribute("aria-current", "page");
  await expect(page.getByTestId("live-indicator")).toHaveText("Live");

  // Asked by an API client while the page is open: appears without a reload.
  const run = await startQuestionRun(request, creds.apiKey, askEnv(marker));
  const row = page.locator(`[data-testid="pending-question"][data-question-id="${run.questionId}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText("Env");
  await expect(row).toContainText(`Which environment? (${marker})`);
  await expect(row).toContainText("Single choice");
  await expect(row).toContainText("Demo Operator");
  await expect(row.getByTestId("expiry")).toContainText(/expires in \d+m/);
  await expect(row.getByRole("link", { name: "Open response" })).toHaveAttribute("href", `/responses/${run.responseId}`);
  await expect(page.getByTestId("nav-questions-count")).toBeVisible();
  await screenshotBoth(page, "questions-pending");

  // The inbox mentions waiting questions too.
  await page.getByRole("link", { name: /^Approvals/ }).click();
  await expect(page.getByTestId("questions-waiting")).toContainText(/questions? (is|are) also waiting/);
  await page.getByTestId("questions-waiting").getByRole("link", { name: "Open Questions" }).click();
  await expect(page).toHaveURL("/questions");

  await row.getByRole("link", { name: /^Answer/ }).click();
  await expect(page).toHaveURL(`/answer/${run.questionId}`);
  await page.getByRole("radio", { name: "prod" }).check();
  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);

  await page.goto("/questions");
  await expect(page.locator(`[data-testid="pending-question"][data-question-id="${run.questionId}"]`)).toHaveCount(0);
  const settled = page.locator(`[data-testid="settled-question"][data-question-id="${run.questionId}"]`);
  await expect(settled.getByTestId("status")).toHaveText("answered");
  await expect(settled.getByTestId("answered-by")).toHaveText(DEMO_OPERATOR);
  await expect(settled).toContainText("console");
  await screenshot(page, "questions-settled");

  // Answered over HTTP while the list is open: it moves to settled by itself.
  const second = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));
  const secondRow = page.locator(`[data-testid="pending-question"][data-question-id="${second.questionId}"]`);
  await expect(secondRow).toBeVisible();
  const res = await request.post("/v1/gateway/question.resolve", { headers: bearer(creds.apiKey), data: { id: second.questionId, answers: { env: ["staging"] } } });
  expect(res.status()).toBe(200);
  await expect(secondRow).toHaveCount(0);
  await expect(page.locator(`[data-testid="settled-question"][data-question-id="${second.questionId}"]`).getByTestId("answered-by")).toHaveText(DEMO_OPERATOR);
});

test("a form as MCP defines it: titled choices, a multi-select, formats and lengths are shown, checked and sent as values", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const asked = await gateway<{ id: string }>(request, creds.apiKey, "question.request", {
    questions: [
      {
        questionId: "order",
        header: "Order",
        question: `Complete the order (${marker}).`,
        presentation: "form",
        fields: [
          { name: "size", label: "Size", type: "enum", enum: ["s", "l"], enumTitles: ["Small", "Large"], required: true },
          { name: "extras", label: "Extras", type: "enum", multiple: true, enum: ["milk", "sugar", "ice"], enumTitles: ["Milk", "Sugar", "Ice"], minItems: 1, maxItems: 2 },
          { name: "email", label: "Receipt to", type: "string", format: "email", required: true },
          { name: "code", label: "Code", type: "string", minLength: 3 },
        ],
      },
    ],
  });

  await page.goto(`/answer/${asked.id}`);
  await expect(page.getByRole("combobox", { name: /Size/ }).locator("option")).toHaveText(["Choose…", "Small", "Large"]);
  await expect(page.getByRole("checkbox")).toHaveCount(3);
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByTestId("field-error")).toHaveText(["Choose one of the options.", "Choose at least one.", "This field is required."]);

  await page.getByRole("combobox", { name: /Size/ }).selectOption({ label: "Large" });
  for (const name of ["Milk", "Sugar", "Ice"]) await page.getByRole("checkbox", { name }).check();
  await page.getByRole("textbox", { name: /Receipt to/ }).fill("ada at example");
  await page.getByRole("textbox", { name: "Code" }).fill("ab");
  await page.getByRole("button", { name: "Submit" }).click();
  await expect(page.getByTestId("field-error")).toHaveText(["Choose at most 2.", "Enter an email address, such as ada@example.com.", "Use at least 3 characters (now 2)."]);

  await page.getByRole("checkbox", { name: "Ice" }).uncheck();
  await page.getByRole("textbox", { name: /Receipt to/ }).fill("ada@example.com");
  await page.getByRole("textbox", { name: "Code" }).fill("abc");
  await page.getByRole("button", { name: "Submit" }).click();

  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
  const record = await gateway<{ question: { answers: Record<string, string[]> } }>(request, creds.apiKey, "question.get", { id: asked.id });
  expect(record.question.answers).toEqual({ "order.size": ["l"], "order.extras": ["milk", "sugar"], "order.email": ["ada@example.com"], "order.code": ["abc"] });
  await expect(page.getByTestId("outcome").getByTestId("answer-value")).toHaveText(["Large", "Milk", "Sugar", "ada@example.com", "abc"]);
});
