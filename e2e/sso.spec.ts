import { expect, test } from "@playwright/test";
import { startOidcProvider, type TOidcProvider } from "../tests/fixtures/oidc-provider";
import { SIGNED_IN_STATE, SIGNED_OUT, screenshot } from "./support";

/**
 * Issue 33, point 1 in a real browser: "Sign in with E2E SSO" on the login page, the provider's
 * own login form (oidc-provider on the port playwright.config.ts names), and back in the console
 * with the role of the person's groups; the provider down gives the login page's sentence.
 */
const PORT = Number(process.env.E2E_PORT ?? 3100);
let idp: TOidcProvider;

test.beforeAll(async () => {
  idp = await startOidcProvider({
    port: PORT + 27,
    redirectUri: `http://127.0.0.1:${PORT}/api/auth/callback/oidc`,
    people: { erin: { email: `erin-${Date.now().toString(36)}@acme.test`, name: `Erin Sso ${Date.now().toString(36)}`, groups: ["e2e-operators"] } },
  });
});
test.afterAll(async () => {
  await idp?.close();
});

test.use({ storageState: SIGNED_OUT });

test("a person signs in with the company's provider and lands in the console with the role of their groups, which an admin sees as teams", async ({ page, browser, baseURL }) => {
  await page.goto("/login?next=%2Fapprovals");
  const button = page.getByRole("link", { name: "Sign in with E2E SSO" });
  await expect(button).toBeVisible();
  await screenshot(page, "login-sso");
  await button.click();
  await expect(page.getByRole("heading", { name: "Test identity provider" })).toBeVisible();
  await page.getByLabel("Person").fill("erin");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/approvals$/);
  const erin = idp.people.get("erin");
  await expect(page.getByTestId("signed-in-user")).toContainText(erin?.name ?? "");
  const me = await page.request.get("/api/trpc/me");
  expect(((await me.json()) as { result: { data: { role: string } } }).result.data.role).toBe("operator");
  // An admin (the demo operator, signed in as the other specs are) sees the teams the provider gave.
  const admin = await browser.newContext({ storageState: SIGNED_IN_STATE, baseURL });
  const adminPage = await admin.newPage();
  await adminPage.goto("/admin");
  const row = adminPage.getByTestId("user-row").filter({ hasText: erin?.email ?? "" });
  await expect(row.getByTestId("user-teams")).toHaveText("e2e-operators");
  await admin.close();
});

test("the provider unreachable: the login page says so", async ({ page }) => {
  await idp.stop();
  try {
    await page.goto("/login");
    await page.getByRole("link", { name: "Sign in with E2E SSO" }).click();
    await expect(page).toHaveURL(/\/login\?error=sso_unreachable/);
    await expect(page.getByTestId("sso-error")).toHaveText(/cannot be reached/);
    await screenshot(page, "login-sso-unreachable");
  } finally {
    await idp.start();
  }
});
