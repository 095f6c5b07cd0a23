import { expect, test } from "@playwright/test";
import { addUser, screenshot, trpcMutationAsPage } from "./support";

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
