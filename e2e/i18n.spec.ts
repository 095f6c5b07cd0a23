import { execFileSync } from "node:child_process";
import { type Browser, expect, type Page, test } from "@playwright/test";
import { completedToolResult, DEMO_OPERATOR, demoCredentials, getEnvelope, openApproval, SIGNED_IN_STATE, SIGNED_OUT, screenshot, signIn, startEchoRun, startQuestionRun, uniqueMarker } from "./support";

/** A single-choice ask_user call with a marker in its text. */
const askEnv = (marker: string) => ({
  name: "ask_user",
  arguments: { questions: [{ id: "env", header: "Env", question: `Which environment? (${marker})`, options: [{ label: "staging" }, { label: "prod" }] }] },
});

/** Adds a console user with a password through the CLI (it reaches the running server's data directory). */
function addUser(name: string): { email: string; password: string } {
  const email = `i18n-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}@countersign.local`;
  const password = "a-long-password-for-i18n";
  execFileSync("npx", ["tsx", "server/cli/main.ts", "user", "add", name, "--role", "operator", "--email", email, "--password", password, "--json"], {
    env: { ...process.env, COUNTERSIGN_DATA_DIR: ".data-e2e", DATABASE_URL: "", LOG_LEVEL: "warn" },
    encoding: "utf8",
  });
  return { email, password };
}

/** A page in a new browser context whose language (navigator.language and Accept-Language) is `locale`. */
async function pageIn(browser: Browser, baseURL: string | undefined, locale: string, signedIn: boolean): Promise<Page> {
  const context = await browser.newContext({ locale, baseURL, storageState: signedIn ? SIGNED_IN_STATE : SIGNED_OUT });
  return context.newPage();
}

test("the answer page follows a Chinese browser: the question is asked and answered in zh-CN, and the answer reaches the run", async ({ browser, baseURL, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const run = await startQuestionRun(request, creds.apiKey, askEnv(marker));
  const page = await pageIn(browser, baseURL, "zh-CN", true);

  await page.goto(`/answer/${run.questionId}`);
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
  await expect(page.getByRole("heading", { level: 1, name: "有一个问题需要你回答" })).toBeVisible();
  const card = page.getByTestId("answer-card");
  await expect(card.getByTestId("question-kind")).toHaveText("单选");
  await expect(card.getByTestId("expiry")).toContainText(/\d+ 分 \d+ 秒后过期/);
  await expect(card).toContainText("提问者：Demo Operator");
  await expect(page.getByTestId("answering-as")).toContainText("回答者：Demo Operator");
  await expect(page.getByRole("link", { name: "查看响应" })).toHaveAttribute("href", `/responses/${run.responseId}`);
  const group = page.getByRole("group", { name: /Which environment\?/ });
  await expect(group).toContainText("选择一项。");
  await expect(group.getByRole("radio", { name: "其他…" })).toBeVisible();

  // A check message in Chinese, then the answer.
  await page.getByRole("button", { name: "发送回答" }).click();
  await expect(group.getByTestId("field-error")).toHaveText("请选择一项。");
  await group.getByRole("radio", { name: "prod" }).check();
  await page.getByRole("button", { name: "发送回答" }).click();

  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "answered");
  await expect(page.getByTestId("outcome-title")).toHaveText(`${DEMO_OPERATOR} 已回答`);
  await expect(page.getByTestId("outcome")).toContainText("通过控制台");
  await expect(page.getByTestId("sent-notice")).toHaveText("谢谢，你的回答已发送。");
  await expect(page.getByTestId("outcome").getByTestId("status")).toHaveText("已回答");
  await screenshot(page, "answer-zh-CN");

  expect(await completedToolResult(request, creds.apiKey, run, "ask_user")).toEqual({ status: "answered", answers: { env: ["prod"] } });
  await page.context().close();
});

test("the answer page stays English for an English browser; a signed-out zh-CN visitor is asked to sign in, and told what failed, in Chinese", async ({ browser, baseURL, request }) => {
  const creds = await demoCredentials();
  const run = await startQuestionRun(request, creds.apiKey, askEnv(uniqueMarker()));

  const en = await pageIn(browser, baseURL, "en-GB", true);
  await en.goto(`/answer/${run.questionId}`);
  await expect(en.locator("html")).toHaveAttribute("lang", "en");
  await expect(en.getByRole("heading", { level: 1, name: "A question for you" })).toBeVisible();
  await expect(en.getByTestId("question-kind")).toHaveText("Single choice");
  await expect(en.getByRole("button", { name: "Send answer" })).toBeVisible();
  await en.context().close();

  const signedOut = await pageIn(browser, baseURL, "zh-CN", false);
  await signedOut.goto(`/answer/${run.questionId}`);
  await expect(signedOut.getByRole("heading", { level: 1, name: "登录后回答" })).toBeVisible();
  await signedOut.getByRole("link", { name: "登录后回答" }).click();
  await expect(signedOut.getByRole("heading", { level: 1, name: "登录操作员控制台" })).toBeVisible();
  await expect(signedOut.getByLabel("邮箱")).toBeVisible();

  // A failure on a zh-CN page reads as a Chinese sentence too (here a malformed single-use link).
  await signedOut.goto("/l/not-a-real-token");
  const outcome = signedOut.getByTestId("link-outcome");
  await expect(outcome.getByRole("heading", { name: "此链接无法使用" })).toBeVisible();
  await expect(outcome.getByRole("alert")).toHaveText("此链接格式不正确：它可能在传递过程中被截断或改动。请打开控制台并登录，在那里找到这个请求。");
  await expect(outcome.getByRole("link", { name: "登录控制台" })).toBeVisible();
  await signedOut.context().close();
});

test("the console follows the user's language setting, after a reload and in a new sign-in", async ({ browser, baseURL }) => {
  // Two sign-ins and several page loads: on a loaded machine this takes close to the default minute.
  test.setTimeout(150_000);
  const user = addUser(`Lin ${Date.now().toString(36)}`);
  const nav = (page: Page) => page.getByRole("navigation").first();

  // No setting yet: the browser's language.
  const zhBrowser = await pageIn(browser, baseURL, "zh-CN", false);
  await zhBrowser.goto("/login");
  await zhBrowser.getByLabel("邮箱").fill(user.email);
  await zhBrowser.getByLabel("密码").fill(user.password);
  await zhBrowser.getByRole("button", { name: "登录" }).click();
  await expect(nav(zhBrowser).getByRole("link", { name: "审批" })).toBeVisible();
  await zhBrowser.context().close();

  const page = await pageIn(browser, baseURL, "en-US", false);
  await signIn(page, user);
  await expect(nav(page).getByRole("link", { name: "Approvals" })).toBeVisible();
  const menu = page.getByTestId("console-language");
  await expect(menu).toHaveValue("");

  await menu.selectOption("zh-CN");
  await expect(nav(page).getByRole("link", { name: "审批" })).toBeVisible();
  await expect(nav(page).getByRole("link", { name: "首页" })).toBeVisible();
  await expect(page.getByRole("button", { name: "退出登录" })).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
  await screenshot(page, "console-zh-CN");

  await page.reload();
  await expect(nav(page).getByRole("link", { name: "审批" })).toBeVisible();
  await expect(page.getByTestId("console-language")).toHaveValue("zh-CN");
  await page.context().close();

  // Another browser, still English: the setting is the user's, so the console is Chinese there too.
  const again = await pageIn(browser, baseURL, "en-US", false);
  await signIn(again, user);
  await expect(nav(again).getByRole("link", { name: "审批" })).toBeVisible();
  await expect(again.getByRole("link", { name: "Approvals" })).toHaveCount(0);

  // Back to the browser's language.
  await again.getByTestId("console-language").selectOption("");
  await expect(nav(again).getByRole("link", { name: "Approvals" })).toBeVisible();
  await again.reload();
  await expect(nav(again).getByRole("link", { name: "Approvals" })).toBeVisible();
  await again.context().close();
});

test("a console set to 简体中文 shows the inbox (tool summaries, refusals), the responses list and the Admin page (built-in descriptions) in Chinese, and approving still works", async ({ browser, baseURL, request }) => {
  // Many pages and three approvals: more than the default minute on a loaded machine.
  test.setTimeout(180_000);
  const creds = await demoCredentials();
  const user = addUser(`Mei ${Date.now().toString(36)}`);
  const page = await pageIn(browser, baseURL, "en-US", false);
  await signIn(page, user);
  await page.getByTestId("console-language").selectOption("zh-CN");
  await expect(page.getByRole("navigation").first().getByRole("link", { name: "审批" })).toBeVisible();

  await page.goto("/approvals");
  await expect(page.getByRole("heading", { level: 1, name: "审批" })).toBeVisible();
  await expect(page.getByTestId("shortcut-hint")).toContainText("j/k 移动 · a 批准 · d 拒绝 · x 选择");
  await expect(page.getByTestId("inbox-filters")).toContainText("审查结论");
  await expect(page.getByRole("heading", { level: 2, name: "已决定" })).toBeVisible();

  // An approval created through /v1 while the page is open, decided in Chinese.
  const marker = uniqueMarker();
  const run = await startEchoRun(request, creds.apiKey, marker);
  // The tool's one-line summary is worded in Chinese from its facts, in the inbox line and the detail pane; the command stays as it is.
  const row = page.locator(`[data-testid="inbox-row"][data-approval-id="${run.approvalId}"]`);
  await expect(row.getByTestId("inbox-row-summary")).toHaveText(`在工作区中运行 \`echo ${marker}\``);
  const card = await openApproval(page, run.approvalId);
  await expect(card).toContainText(marker);
  await expect(card.locator(".approval-message")).toHaveText(`在工作区中运行 \`echo ${marker}\`？`);
  await expect(card).not.toContainText("in the workspace");
  await expect(card).toContainText("工作目录");
  await expect(card).toContainText("请求于");
  await expect(card.getByTestId("expiry")).toContainText(/后过期/);
  await expect(card.getByTestId("decision-options")).toContainText("更多选项：编辑、改为回复、长期授权");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await screenshot(page, "inbox-zh-CN");

  // A refused edit (422) reads in Chinese, worded from the server's reason code.
  await card.getByText("更多选项：编辑、改为回复、长期授权").click();
  await card.getByTestId("edit-arguments").fill(JSON.stringify({ command: "" }));
  await card.getByTestId("approve-with-options").click();
  const refusal = card.getByTestId("decide-error");
  await expect(refusal).toContainText("你的决定未被接受：编辑后的参数对 exec 无效：");
  await expect(refusal).toContainText("没有批准任何内容。");
  await expect(refusal).not.toContainText("Nothing was approved");
  await card.getByText("更多选项：编辑、改为回复、长期授权").click();
  await card.getByRole("button", { name: "批准", exact: true }).click();

  await expect(page.locator(`[data-testid="decision-note"][data-approval-id="${run.approvalId}"]`)).toContainText("你批准了 tool:exec");
  const decided = page.locator(`[data-testid="decided-approval"][data-approval-id="${run.approvalId}"]`);
  await expect(decided.getByTestId("status")).toHaveText("已批准");
  await expect(decided).toContainText("控制台");
  await expect(decided.getByRole("link", { name: `打开响应 ${run.responseId}` })).toHaveText("查看响应");
  await expect.poll(async () => (await getEnvelope(request, creds.apiKey, run)).status, { timeout: 15_000 }).toBe("completed");

  // A 409: someone else denies while this approval is on its way; the sentence is Chinese, from the server's code.
  const raced = await startEchoRun(request, creds.apiKey, uniqueMarker());
  const racedCard = await openApproval(page, raced.approvalId);
  await page.route("**/api/trpc/approvals.decide*", async (route) => {
    expect((await request.post(`/v1/approvals/${raced.approvalId}`, { headers: { authorization: `Bearer ${creds.apiKey}` }, data: { decision: "deny" } })).status()).toBe(200);
    await route.continue();
  });
  await racedCard.getByRole("button", { name: "批准", exact: true }).click();
  await expect(page.locator('p[aria-live="polite"]')).toHaveText("此审批已被拒绝；每个决定只能使用一次。你的决定没有被采用。");
  await page.unroute("**/api/trpc/approvals.decide*");

  // The responses list: headings, columns and the server's status vocabulary.
  await page.goto("/responses");
  await expect(page.getByRole("heading", { level: 1, name: "响应" })).toBeVisible();
  await expect(page.getByTestId("responses-table").getByRole("columnheader", { name: "输出 token" })).toBeVisible();
  await expect(page.getByTestId("filter-status").getByRole("button", { name: "运行中" })).toBeVisible();
  await expect(page.locator(`[data-testid="response-row"][data-response-id="${run.responseId}"]`).getByTestId("status")).toHaveText("已完成");

  // The Admin page: heading, tabs and the role legend.
  await page.goto("/admin");
  await expect(page.getByRole("heading", { level: 1, name: "管理" })).toBeVisible();
  await expect(page.getByRole("tab", { name: "用户与角色" })).toBeVisible();
  await expect(page.getByRole("tab", { name: "API 密钥" })).toBeVisible();
  await expect(page.getByTestId("users-table").getByRole("columnheader", { name: "有效密钥" })).toBeVisible();
  await expect(page.locator(".role-legend")).toContainText("查看全部，不做决定");
  await screenshot(page, "admin-zh-CN");

  // The built-in agents' and tools' descriptions are worded in Chinese (the model still reads the English).
  await page.getByRole("tab", { name: "智能体与策略" }).click();
  const agent = page.locator('[data-testid="agent-card"][data-agent="scripted"]');
  await expect(agent).toContainText("按输入的脚本执行的确定性模型；用于演示、测试和基准测试。");
  const execRow = agent.getByTestId("agent-tools").getByRole("row").filter({ has: page.locator("code", { hasText: /^exec$/ }) });
  await expect(execRow.getByTestId("tool-description")).toHaveText("在会话工作区中运行一条 shell 命令。");
  await expect(agent.getByTestId("agent-tools")).not.toContainText("Run a shell command in the session workspace.");
  await screenshot(page, "admin-agents-zh-CN");
  await page.context().close();
});

test("console page titles follow the browser's language while the user chose none", async ({ browser, baseURL }) => {
  const zh = await pageIn(browser, baseURL, "zh-CN", true);
  await zh.goto("/admin");
  await expect(zh).toHaveTitle("管理 · Countersign");
  await zh.goto("/responses");
  await expect(zh).toHaveTitle("响应 · Countersign");
  await zh.context().close();
  const en = await pageIn(browser, baseURL, "en-US", true);
  await en.goto("/approvals");
  await expect(en).toHaveTitle("Approvals · Countersign");
  await en.context().close();
});
