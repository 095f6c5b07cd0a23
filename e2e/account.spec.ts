import { expect, test } from "@playwright/test";
import { addUser, screenshot, signedInPage } from "./support";

test("a person's account page lists the browsers signed in as them; ending another one signs it out, this one stays", async ({ browser, baseURL }) => {
  const user = addUser("Ava Account", "member");
  const other = await signedInPage(browser, baseURL, user);
  const page = await signedInPage(browser, baseURL, user);
  await page.getByTestId("signed-in-user").click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
  const sessions = page.getByTestId("account-session");
  await expect(sessions).toHaveCount(2);
  await expect(page.locator('[data-testid="account-session"][data-current="true"]')).toContainText("This browser");
  await expect(page.getByRole("heading", { name: "Language" })).toBeVisible();
  await screenshot(page, "account");

  const elsewhere = page.locator('[data-testid="account-session"][data-current="false"]');
  await elsewhere.getByTestId("end-session").click();
  await elsewhere.getByRole("button", { name: "Yes, sign it out" }).click();
  await expect(sessions).toHaveCount(1);
  await expect(page.locator('[data-testid="account-session"][data-current="true"]')).toHaveCount(1);

  // The other browser is signed out: its next page goes to the sign-in page.
  await other.goto("/approvals");
  await expect(other).toHaveURL(/\/login/);
  await other.context().close();
  await page.context().close();
});
