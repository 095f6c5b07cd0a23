import { expect, type Page, test } from "@playwright/test";
import { addUser, DEMO_OPERATOR, demoCredentials, gateway, SIGNED_OUT, screenshot, signIn, startQuestionRun, submitLogin, uniqueMarker } from "./support";

/**
 * Least privilege in the browser: the post-login `next` never leaves the console's origin, and an
 * answer link's API key is exchanged for a cookie of that one question, then gone from the page.
 */
test.use({ storageState: SIGNED_OUT });

const ask = (marker: string) => ({
  name: "ask_user",
  arguments: { questions: [{ id: "env", header: "Env", question: `Which environment? ${marker}`, options: [{ label: "staging" }, { label: "prod" }] }] },
});

/** `next` values that would leave the origin if followed naively (raw: put into the URL as they are). */
const TRICKS: Array<{ next: string; raw?: boolean }> = [
  { next: "//evil.example/x" },
  { next: "/\\evil.example" },
  { next: "\\/evil.example" },
  { next: "/\t/evil.example" },
  { next: "https:evil.example" },
  { next: "https://evil.example" },
  { next: "javascript:alert(document.cookie)" },
  { next: "//evil.example", raw: true },
  { next: "/%5Cevil.example", raw: true },
  { next: "%2F%2Fevil.example", raw: true },
  { next: "%09//evil.example", raw: true },
];

const loginUrl = (trick: { next: string; raw?: boolean }) => `/login?next=${trick.raw ? trick.next : encodeURIComponent(trick.next)}`;

/** Where the page ends up once the login page has sent it on. */
async function landing(page: Page): Promise<URL> {
  await page.waitForURL((url) => url.pathname !== "/login");
  return new URL(page.url());
}

test("after signing in, a cross-origin next lands on / and a same-origin one still works", async ({ page, baseURL }) => {
  const user = addUser("Next Tester", "member");
  const origin = new URL(baseURL ?? "").origin;
  let dialogs = 0;
  page.on("dialog", (d) => {
    dialogs++;
    void d.dismiss();
  });

  // The attack through the form itself.
  await page.goto(loginUrl({ next: "/\\evil.example" }));
  await signIn(page, user);
  let url = await landing(page);
  expect(url.origin).toBe(origin);
  expect(url.pathname).toBe("/");

  // The same decision applies when an already signed-in visitor opens the login page.
  for (const trick of TRICKS) {
    await page.goto(loginUrl(trick));
    url = await landing(page);
    expect(url.origin, trick.next).toBe(origin);
    expect(url.pathname, trick.next).toBe("/");
    await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  }
  expect(dialogs).toBe(0);

  // The legitimate use: a same-origin next (with its query) still works.
  await page.goto(`/login?next=${encodeURIComponent("/questions?status=all")}`);
  url = await landing(page);
  expect(`${url.pathname}${url.search}`).toBe("/questions?status=all");
});

test("a signed-out visitor sent to log in comes back to the same-origin page it asked for", async ({ page }) => {
  const user = addUser("Next Returner", "member");
  await page.goto("/responses");
  await expect(page).toHaveURL(/\/login\?next=%2Fresponses$/);
  await signIn(page, user);
  await expect(page).toHaveURL("/responses");
});

test("too many failed sign-ins: the login form says how long to wait", async ({ page }) => {
  const user = addUser("Backoff Tester", "member");
  await page.goto("/login");
  for (let i = 0; i < 5; i++) expect(await submitLogin(page, user.email, `wrong-${i}`)).toBe(401);
  // The account now waits, even for the right password. (The per-address limit may answer first
  // when earlier tests signed in from this address a lot: its wait is waited out.)
  let wait: string | null = null;
  for (let attempt = 0; attempt < 3 && wait === null; attempt++) {
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/auth/sign-in/email"));
    await page.getByRole("button", { name: "Sign in" }).click();
    const res = await answer;
    expect(res.status()).toBe(429);
    const seconds = await res.headerValue("retry-after");
    if (((await res.json()) as { detail: string }).detail.includes("for this account")) wait = seconds;
    else await page.waitForTimeout(Number(seconds) * 1000 + 300);
  }
  expect(wait).toMatch(/^[1-9]\d*$/);
  await expect(page.locator("#login-error")).toHaveText(`Too many failed sign-ins for this account; try again in ${wait} seconds.`);
  await screenshot(page, "login-backoff");
  // After the wait the right password works.
  await page.waitForTimeout(Number(wait) * 1000 + 300);
  await signIn(page, user);
  await expect(page).toHaveURL("/");
});

test("an answer link: the key is exchanged for a cookie of that question and leaves the address bar; reload works; nothing else opens", async ({ page, request }) => {
  const creds = await demoCredentials();
  const run = await startQuestionRun(request, creds.apiKey, ask(uniqueMarker()));
  const other = await startQuestionRun(request, creds.apiKey, ask(uniqueMarker()));

  const keyAfterExchange: string[] = [];
  let exchanged = false;
  page.on("request", (r) => {
    const carries = `${r.url()} ${JSON.stringify(r.headers())} ${r.postData() ?? ""}`.includes(creds.apiKey);
    if (carries && !exchanged) {
      exchanged = true;
      return;
    }
    if (carries) keyAfterExchange.push(r.url());
  });

  await page.goto(`/answer/${run.questionId}?access_token=${encodeURIComponent(creds.apiKey)}`);
  await expect(page.getByTestId("answering-as")).toContainText("(link access)");
  await expect(page).toHaveURL(`/answer/${run.questionId}`);
  expect(await page.evaluate(() => window.location.href)).not.toContain("access_token");
  expect(await page.evaluate(() => document.documentElement.outerHTML)).not.toContain(creds.apiKey);

  const cookies = await page.context().cookies();
  expect(cookies.map((c) => c.name)).toEqual([expect.stringMatching(/^cs_answer_[0-9a-f]{24}$/)]);
  expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api" });
  expect(cookies[0]?.value).not.toContain(creds.apiKey);
  expect(cookies[0]?.expires).toBeLessThanOrEqual(Date.now() / 1000 + 15 * 60 + 5);
  expect(await page.evaluate(() => document.cookie)).toBe("");

  // Reload: the question still opens, from the cookie alone.
  await page.reload();
  await expect(page.getByTestId("answering-as")).toContainText("(link access)");
  await expect(page.getByRole("group", { name: /Which environment\?/ })).toBeVisible();

  // The cookie opens neither another question nor the console.
  await page.goto(`/answer/${other.questionId}`);
  await expect(page.getByTestId("sign-in-prompt")).toContainText("Sign in to answer");
  await page.goto("/approvals");
  await expect(page).toHaveURL(/\/login\?next=%2Fapprovals$/);

  // Back on the question, the answer goes through.
  await page.goto(`/answer/${run.questionId}`);
  await page.getByRole("radio", { name: "prod" }).check();
  await page.getByRole("button", { name: "Send answer" }).click();
  await expect(page.getByTestId("outcome-title")).toHaveText(`Answered by ${DEMO_OPERATOR}`);
  const record = await gateway<{ question: { status: string } }>(request, creds.apiKey, "question.get", { id: run.questionId });
  expect(record.question.status).toBe("answered");
  expect(exchanged).toBe(true);
  expect(keyAfterExchange).toEqual([]);
});
