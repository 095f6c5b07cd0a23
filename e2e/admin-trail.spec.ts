import { expect, test } from "@playwright/test";
import { addUser, DEMO_OPERATOR, personText, screenshot, trpcMutationAsPage, uniqueMarker } from "./support";

test("an admin opens the admin trail, filters it by action and by actor, and sees the rows", async ({ page }) => {
  // A user added with the CLI (through the running server), then promoted in the console.
  const user = addUser("Trail Tess", "member");
  await page.goto("/admin");
  const promoted = await trpcMutationAsPage(page, "admin.setRole", { userId: user.userId, role: "operator" });
  expect(promoted.status, promoted.body).toBe(200);

  await page.getByTestId("open-admin-trail").click();
  await expect(page).toHaveURL(/\/admin\/trail$/);
  await expect(page.getByRole("heading", { name: "Admin trail" })).toBeVisible();
  await expect(page.getByTestId("trail-row").first()).toBeVisible();

  // Filtered by action, server-side: only role changes, ours among them.
  await page.getByTestId("trail-filter-action").selectOption("user.role_changed");
  const rows = page.getByTestId("trail-row");
  await expect(rows.filter({ hasText: user.userId })).toHaveCount(1);
  await expect(page.locator('[data-testid="trail-row"]:not([data-action="user.role_changed"])')).toHaveCount(0);
  const row = rows.filter({ hasText: user.userId });
  await expect(row).toContainText("Role changed");
  await expect(row).toContainText('"to":"operator"');
  await expect(row).toContainText("Console");
  // Who acted, and whom it concerned, each with the email beside the name.
  await expect(row.getByTestId("person").first()).toHaveText(DEMO_OPERATOR);
  await expect(row.getByTestId("trail-target-person")).toHaveText(personText(user.name, user.email));
  await expect(page.getByTestId("trail-export")).toHaveAttribute("href", "/api/export/admin-trail?action=user.role_changed");

  // Filtered by actor: the CLI created the user.
  await page.getByTestId("trail-filter-action").selectOption("");
  await page.getByTestId("trail-filter-actor").selectOption("cli");
  const created = page.getByTestId("trail-row").filter({ hasText: user.userId });
  await expect(created).toHaveCount(1);
  await expect(created).toHaveAttribute("data-action", "user.created");
  await expect(created).toContainText("CLI (");
  await screenshot(page, "admin-trail");
});

test("an admin renames a user on the Users page: a name another user has is refused whatever its case or width, a free one is one trail row", async ({ page }) => {
  const user = addUser("Rena Rename", "member");
  const renamed = `Rena ${uniqueMarker()}`;
  await page.goto("/admin");
  const userRow = page.locator(`[data-testid="user-row"][data-user-id="${user.userId}"]`);
  await userRow.getByRole("button", { name: `Rename ${user.name}` }).click();
  const input = userRow.getByRole("textbox", { name: `New display name of ${user.name}` });

  // The demo operator's name in fullwidth capitals is the same name: refused, nothing changes.
  await input.fill("ＤＥＭＯ ＯＰＥＲＡＴＯＲ");
  await userRow.getByRole("button", { name: "Save name" }).click();
  await expect(page.getByTestId("users-error")).toHaveText(
    "Another user already has the display name ＤＥＭＯ ＯＰＥＲＡＴＯＲ (names are compared ignoring case, letter width and invisible characters); choose another name.",
  );
  await expect(input).toHaveValue("ＤＥＭＯ ＯＰＥＲＡＴＯＲ");

  await input.fill(renamed);
  await userRow.getByRole("button", { name: "Save name" }).click();
  await expect(userRow.getByTestId("user-name")).toHaveText(renamed);
  await expect(userRow.getByTestId("rename-form")).toHaveCount(0);
  await expect(page.getByTestId("users-error")).toHaveCount(0);

  await page.goto("/admin/trail");
  await page.getByTestId("trail-filter-action").selectOption("user.renamed");
  const rows = page.getByTestId("trail-row").filter({ hasText: user.userId });
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText("User renamed");
  await expect(rows).toContainText(`"from":"${user.name}"`);
  await expect(rows).toContainText(`"to":"${renamed}"`);
  await expect(rows.getByTestId("person").first()).toHaveText(DEMO_OPERATOR);
  await expect(rows.getByTestId("trail-target-person")).toHaveText(personText(renamed, user.email));
  await screenshot(page, "admin-trail-rename");
});

test("an admin offboards a user who left on the Users page: disabled, no live key, one trail row", async ({ page }) => {
  const user = addUser("Leo Leaver", "operator");
  await page.goto("/admin");
  const userRow = page.locator(`[data-testid="user-row"][data-user-id="${user.userId}"]`);
  await expect(userRow).toHaveAttribute("data-status", "active");
  await userRow.getByRole("button", { name: `Offboard ${user.name}: disabled, console sessions ended, API keys revoked for good` }).click();
  await userRow.getByRole("button", { name: "Yes, offboard: keys revoked for good" }).click();
  await expect(userRow).toHaveAttribute("data-status", "disabled");
  await expect(userRow.locator("td").filter({ hasText: /^0$/ })).toHaveCount(1);
  await expect(page.getByTestId("users-error")).toHaveCount(0);

  await page.goto("/admin/trail");
  await page.getByTestId("trail-filter-action").selectOption("user.offboarded");
  const rows = page.getByTestId("trail-row").filter({ hasText: user.userId });
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText("User offboarded");
  await expect(rows).toContainText('"keysRevoked":1');
});
