import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { addUser, bearer, screenshot, signIn } from "./support";

/** A tRPC mutation by another admin (its API key), as another browser or the CLI would act meanwhile. */
async function asOtherAdmin(request: APIRequestContext, apiKey: string, path: string, input: unknown): Promise<void> {
  const res = await request.post(`/api/trpc/${path}`, { headers: bearer(apiKey), data: input });
  expect(res.status(), await res.text()).toBe(200);
}

/** Sends the next call to `path` only after `meanwhile` ran: what another person did while the click was on its way. */
async function raceNext(page: Page, path: string, meanwhile: () => Promise<void>): Promise<void> {
  await page.route(
    `**/api/trpc/${path}*`,
    async (route) => {
      await meanwhile();
      await route.continue();
    },
    { times: 1 },
  );
}

test("a console set to 简体中文 shows the Admin page's refusals in Chinese: a 409 (the user was deleted meanwhile) and a 403 (the admin lost the role meanwhile)", async ({ browser, baseURL, request }) => {
  // Four users through the CLI, a sign-in and two page loads of the users list: minutes on a loaded machine.
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const admin = addUser(`Ada ${stamp}`, "admin");
  const other = addUser(`Oskar ${stamp}`, "admin");
  const target = addUser(`Tao ${stamp}`, "member");
  const paused = addUser(`Pia ${stamp}`, "member");
  await asOtherAdmin(request, other.apiKey, "admin.disableUser", { userId: paused.userId });

  const context = await browser.newContext({ locale: "en-US", baseURL, storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  await signIn(page, admin);
  await page.getByTestId("console-language").selectOption("zh-CN");
  await expect(page.getByRole("navigation").first().getByRole("link", { name: "审批" })).toBeVisible();
  await page.goto("/admin");
  const alert = page.getByRole("main").getByRole("alert");

  // 409: another admin deletes Tao while this admin's role change is on its way.
  const targetRow = page.locator(`[data-testid="user-row"][data-user-id="${target.userId}"]`);
  await expect(targetRow).toBeVisible({ timeout: 60_000 });
  await raceNext(page, "admin.setRole", () => asOtherAdmin(request, other.apiKey, "admin.deleteUser", { userId: target.userId }));
  await targetRow.getByRole("combobox", { name: `Tao ${stamp} 的角色` }).selectOption("operator");
  await expect(alert).toContainText(`Tao ${stamp} 已被删除；其角色不能再更改。`);
  await expect(alert).toContainText("请重新加载页面查看当前状态。");
  await expect(alert).not.toContainText("was deleted");
  await screenshot(page, "admin-409-zh-CN");

  // 403: another admin makes this one an operator while its click on 启用 is on its way.
  await page.reload();
  const pausedRow = page.locator(`[data-testid="user-row"][data-user-id="${paused.userId}"]`);
  await expect(pausedRow).toHaveAttribute("data-status", "disabled", { timeout: 60_000 });
  await raceNext(page, "admin.enableUser", () => asOtherAdmin(request, other.apiKey, "admin.setRole", { userId: admin.userId, role: "operator" }));
  await pausedRow.getByRole("button", { name: `启用 Pia ${stamp}` }).click();
  await expect(alert).toHaveText("你的角色不能管理此工作区。");
  await screenshot(page, "admin-403-zh-CN");
  await context.close();
});
