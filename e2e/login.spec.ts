import { expect, test } from "@playwright/test";
import { demoCredentials, SIGNED_OUT, screenshot, submitLogin } from "./support";

test.use({ storageState: SIGNED_OUT });

test("console pages send a signed-out visitor to the login page", async ({ page }) => {
  await page.goto("/responses");
  await expect(page).toHaveURL(/\/login\?next=%2Fresponses$/);
  await expect(page.getByRole("heading", { name: "Sign in to the operator console" })).toBeVisible();
  await screenshot(page, "login");
});

test("a bad password shows a clear error and stays on the login page", async ({ page }) => {
  const creds = await demoCredentials();
  await page.goto("/login");
  expect(await submitLogin(page, creds.email, `${creds.password}-wrong`)).toBe(401);
  await expect(page.locator("#login-error")).toHaveText("Invalid email or password.");
  await expect(page.locator("#login-error")).toHaveAttribute("role", "alert");
  await expect(page).toHaveURL("/login");
  await expect(page.getByLabel("Password")).toHaveAttribute("aria-invalid", "true");
  await screenshot(page, "login-error");
});

test("after signing in, the login page leads to the requested page, and signing out ends the session", async ({ page }) => {
  const creds = await demoCredentials();
  await page.goto("/responses");
  await expect(page).toHaveURL(/\/login/);
  expect(await submitLogin(page, creds.email, creds.password)).toBe(200);
  await expect(page).toHaveURL("/responses");
  await expect(page.getByRole("heading", { name: "Responses", level: 1 })).toBeVisible();
  await page.goto("/login");
  await expect(page).toHaveURL("/");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL("/login");
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=%2F$/);
});
