import { expect, type Locator, type Page, test } from "@playwright/test";
import { lowContrastTexts } from "./contrast";
import { addUser, demoCredentials, SIGNED_OUT, screenshot, startEchoRun, startQuestionRun, uniqueMarker } from "./support";

/**
 * Point 7 of issue 15: no primary action is ever off-screen at 1280×800 or 390×844 (the header
 * wraps, action columns are pinned while a table scrolls sideways), the phone menu, dark-mode
 * contrast, the Admin page's last-used time, the favicon.
 */

const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
type TSize = (typeof SIZES)[number];

/** Scrolls the page (never the element's table) so `el` sits in the upper part of the screen. */
async function scrollPageTo(el: Locator): Promise<void> {
  await el.evaluate((node) => window.scrollTo(0, node.getBoundingClientRect().top + window.scrollY - 220));
}

/** `el` lies wholly inside the viewport. */
async function expectOnScreen(el: Locator, size: TSize, what: string): Promise<void> {
  const box = await el.boundingBox();
  expect(box, `${what}: no box`).not.toBeNull();
  if (!box) return;
  const where = `${what} at ${size.width}×${size.height}: ${JSON.stringify(box)}`;
  expect(box.x, where).toBeGreaterThanOrEqual(0);
  expect(box.y, where).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, where).toBeLessThanOrEqual(size.width + 0.5);
  expect(box.y + box.height, where).toBeLessThanOrEqual(size.height + 0.5);
}

/** An action in a table row: on screen with the table scrolled fully left and fully right. */
async function expectPinned(action: Locator, size: TSize, what: string): Promise<void> {
  await expect(action).toBeVisible();
  await scrollPageTo(action);
  for (const side of ["left", "right"] as const) {
    await action.evaluate((node, to) => {
      const wrap = node.closest(".table-wrap");
      if (wrap) wrap.scrollLeft = to === "left" ? 0 : wrap.scrollWidth;
    }, side);
    await expectOnScreen(action, size, `${what} (table scrolled ${side})`);
  }
}

/** The page is never wider than the screen: only tables scroll sideways, inside their frame. */
async function expectNoPageOverflow(page: Page, size: TSize, what: string): Promise<void> {
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth), { message: `${what}: the page scrolls sideways` }).toBeLessThanOrEqual(size.width);
}

test("every primary action is on screen at 1280×800 and 390×844; screenshots of the main pages", async ({ page, request }) => {
  // Eleven pages at two widths, each with screenshots.
  test.setTimeout(240_000);
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  // Its key is the newest, so it is on the keys table's first page however many keys other tests made.
  const layoutMember = addUser(`Layout Member ${marker}`, "member");
  const approval = await startEchoRun(request, creds.apiKey, marker);
  const question = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: `Ship where? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
  });

  for (const size of SIZES) {
    const suffix = size.width === 390 ? "-phone" : "-1280";
    await page.setViewportSize(size);

    await page.goto("/");
    const row = (id: string) => page.locator(`[data-testid="waiting-item"][data-id="${id}"]`);
    await expect(row(approval.approvalId)).toBeVisible();
    await expectOnScreen(page.getByRole("button", { name: "Sign out" }), size, "Sign out");
    await expectNoPageOverflow(page, size, "home");
    await screenshot(page, `layout-home${suffix}`);
    await expectPinned(row(approval.approvalId).getByRole("link", { name: "Decide" }), size, "Decide on home");
    await expectPinned(row(question.questionId).getByRole("link", { name: "Answer" }), size, "Answer on home");

    await page.goto(`/approvals?focus=${approval.approvalId}`);
    const card = page.locator(`[data-testid="approval"][data-approval-id="${approval.approvalId}"]`);
    await expect(card).toBeVisible();
    await expectNoPageOverflow(page, size, "approvals");
    await screenshot(page, `layout-approvals${suffix}`);
    await scrollPageTo(card);
    await expectOnScreen(card.getByRole("button", { name: "Approve", exact: true }), size, "Approve");
    await expectOnScreen(card.getByRole("button", { name: "Deny", exact: true }), size, "Deny");

    await page.goto("/questions");
    const pending = page.locator(`[data-testid="pending-question"][data-question-id="${question.questionId}"]`);
    await expect(pending).toBeVisible();
    await expectNoPageOverflow(page, size, "questions");
    await screenshot(page, `layout-questions${suffix}`);
    await expectPinned(pending.getByRole("link", { name: /^Answer/ }), size, "Answer on questions");

    await page.goto("/admin");
    const member = page.getByTestId("user-row").filter({ hasText: `Layout Member ${marker}` });
    await expect(member).toBeVisible();
    await expectNoPageOverflow(page, size, "admin users");
    await screenshot(page, `layout-admin-users${suffix}`);
    await expectPinned(member.getByRole("button", { name: /^Delete/ }), size, "Delete user");
    await page.getByRole("tab", { name: "API keys" }).click();
    const key = page.getByTestId("key-row").filter({ hasText: layoutMember.apiKey.slice(0, 10) });
    await expect(key).toBeVisible();
    await screenshot(page, `layout-admin-keys${suffix}`);
    await expectPinned(key.getByRole("button", { name: /^Revoke/ }), size, "Revoke key");

    for (const path of ["/responses", "/sessions", "/grants", "/usage", "/analytics", "/policy", "/notifications"]) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expectOnScreen(page.getByRole("button", { name: "Sign out" }), size, `Sign out on ${path}`);
      await expectNoPageOverflow(page, size, path);
      await screenshot(page, `layout${path.replace("/", "-")}${suffix}`);
    }
  }
});

test("at phone width the navigation is a menu: closed, opened by its button, closed again after navigating", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  const menu = page.getByRole("button", { name: /^Menu/ });
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  await expect(nav).toBeHidden();
  await menu.click();
  await expect(menu).toHaveAttribute("aria-expanded", "true");
  await expect(nav.getByRole("link")).toHaveCount(11);
  for (const link of await nav.getByRole("link").all()) await expectOnScreen(link, { width: 390, height: 844 }, `menu link ${await link.textContent()}`);
  await screenshot(page, "layout-menu-phone", { viewport: true });
  await nav.getByRole("link", { name: "Sessions" }).click();
  await expect(page).toHaveURL(/\/sessions$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(/Sessions/);
  await expect(nav).toBeHidden();
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  // At desktop width the same navigation is always shown and the button is not.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(nav).toBeVisible();
  await expect(menu).toBeHidden();
});

test("dark mode: every text and button meets WCAG AA contrast", async ({ page, browser, baseURL, request }) => {
  test.setTimeout(120_000);
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  await startEchoRun(request, creds.apiKey, marker);
  const question = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: `Dark where? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
  });
  await page.emulateMedia({ colorScheme: "dark" });
  const pages = ["/", "/approvals", "/questions", `/answer/${question.questionId}`, "/responses", "/sessions", "/grants", "/usage", "/analytics", "/policy", "/notifications", "/admin"];
  const failures: string[] = [];
  for (const path of pages) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
    await page.waitForLoadState("networkidle");
    failures.push(...(await lowContrastTexts(page)).map((f) => `${path}: ${f}`));
  }
  for (const tab of ["API keys", "Agents & policies", "Paired devices"]) {
    await page.getByRole("tab", { name: tab }).click();
    failures.push(...(await lowContrastTexts(page)).map((f) => `/admin ${tab}: ${f}`));
  }
  await screenshot(page, "layout-dark-admin");
  const signedOut = await browser.newContext({ storageState: SIGNED_OUT, baseURL, colorScheme: "dark" });
  const login = await signedOut.newPage();
  await login.goto("/login");
  await expect(login.getByRole("button", { name: "Sign in" })).toBeVisible();
  failures.push(...(await lowContrastTexts(login)).map((f) => `/login: ${f}`));
  await signedOut.close();
  expect(failures).toEqual([]);
});

test("the Admin page shows when a key was last used; the console has a favicon", async ({ page, request }) => {
  // A fresh user's key: the newest, so on the keys table's first page (the table pages by 50).
  const user = addUser(`Last Used ${uniqueMarker()}`, "member");
  const res = await request.get("/v1/grants", { headers: { authorization: `Bearer ${user.apiKey}` } });
  expect(res.status()).toBe(200);
  await page.goto("/admin");
  await page.getByRole("tab", { name: "API keys" }).click();
  const lastUsed = page.getByTestId("key-row").filter({ hasText: user.apiKey.slice(0, 10) }).getByTestId("key-last-used");
  await expect(lastUsed.locator("time")).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);
  const at = Date.parse((await lastUsed.locator("time").getAttribute("datetime")) ?? "");
  expect(Date.now() - at).toBeLessThan(10 * 60_000);

  const href = await page.locator('head link[rel="icon"]').first().getAttribute("href");
  expect(href).toMatch(/icon/);
  const icon = await request.get(href ?? "");
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toContain("image/svg+xml");
});
