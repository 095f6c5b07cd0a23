import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createTranslator } from "next-intl";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { checkedFetch, errorSentence } from "../components/error-sentence";
import { serverTextIn } from "../components/list-kit/labels";
import { describeEvent } from "../components/trajectory-audit";
import { BUILTIN_AGENTS } from "../server/agents/catalog";
import type { TTrpcContext } from "../server/api/trpc/context";
import { publicProcedure, router } from "../server/api/trpc/init";
import { errorReasonSentence, invalidFieldReason, type TAdminAct, type TAuditorAct, type TErrorReason, type TCwdRefusal, type TErrorReasonCode, type TNotFoundKind, type TRoleAct } from "../server/core/error-reasons";
import { DomainError, refused } from "../server/core/errors";
import { nodeInvokeTool } from "../server/devices/node-invoke-tool";
import { approvalTarget } from "../server/devices/run-device-tool";
import type { TDeviceRow } from "../server/devices/store";
import { echoTool, execTool } from "../server/tools/host-tools";
import { CATALOGUES } from "./catalogues";
import type { TLocale } from "./locales";

const serverText = (locale: TLocale) =>
  serverTextIn(
    createTranslator({ locale, messages: CATALOGUES[locale], namespace: "serverText", onError: (error) => expect.fail(error.message) }),
    createTranslator({ locale, messages: CATALOGUES[locale], namespace: "vocab", onError: (error) => expect.fail(error.message) }),
  );
const en = serverText("en");
const zh = serverText("zh-CN");

/** One refusal of each code the server sends (a code without an example here is a type error). */
const EXAMPLES: { [C in TErrorReasonCode]: Extract<TErrorReason, { code: C }> } = {
  auditor: { code: "auditor" },
  othersRuns: { code: "othersRuns" },
  notApprover: { code: "notApprover", params: { agent: "deploy" } },
  notInTeam: { code: "notInTeam", params: { agent: "deploy", teams: "payments-oncall" } },
  ownQuorum: { code: "ownQuorum", params: { n: 2 } },
  ownRun: { code: "ownRun", params: { agent: "scripted" } },
  roleCannot: { code: "roleCannot", params: { act: "revokeGrants" } },
  bulkNotYours: { code: "bulkNotYours", params: { n: 2 }, refusal: { code: "ownRun", params: { agent: "scripted" } } },
  bulkHighRisk: { code: "bulkHighRisk", params: { n: 1 } },
  alreadyDecided: { code: "alreadyDecided", params: { status: "denied" } },
  approvalExpired: { code: "approvalExpired" },
  approvalCancelled: { code: "approvalCancelled" },
  otherResponse: { code: "otherResponse" },
  bindingChanged: { code: "bindingChanged" },
  notWaiting: { code: "notWaiting" },
  alreadyVoted: { code: "alreadyVoted" },
  quorumAsAsked: { code: "quorumAsAsked", params: { n: 3 } },
  notEditable: { code: "notEditable", params: { tool: "get_page_context" } },
  editInvalid: { code: "editInvalid", params: { tool: "exec", issues: "command: command must not be empty" } },
  grantNoSession: { code: "grantNoSession", params: { agent: "scripted-reviewed" } },
  grantNoDays: { code: "grantNoDays", params: { agent: "scripted-reviewed" } },
  grantMaxDays: { code: "grantMaxDays", params: { agent: "scripted", max: 30 } },
  grantRevoked: { code: "grantRevoked" },
  responseClosed: { code: "responseClosed", params: { status: "completed", act: "cancel" } },
  adminOnly: { code: "adminOnly", params: { act: "changeRoles" } },
  auditorReadOnly: { code: "auditorReadOnly", params: { act: "createKeys" } },
  rolesOnly: { code: "rolesOnly", params: { act: "readTrail" } },
  ownAccount: { code: "ownAccount", params: { change: "role" } },
  lastAdminRole: { code: "lastAdminRole" },
  lastAdmin: { code: "lastAdmin", params: { name: "Ada" } },
  userDeleted: { code: "userDeleted", params: { name: "Ada", change: "keys" } },
  userStatusIs: { code: "userStatusIs", params: { name: "Ada", status: "disabled" } },
  userChanged: { code: "userChanged", params: { name: "Ada" } },
  nameTaken: { code: "nameTaken", params: { name: "ＡＤＡ" } },
  keyRevoked: { code: "keyRevoked" },
  deviceRevoked: { code: "deviceRevoked", params: { name: "build-box" } },
  deviceNameTaken: { code: "deviceNameTaken", params: { name: "build-box" } },
  editReviewDenied: { code: "editReviewDenied", params: { risk: "high", rationale: "It deletes files outside the workspace" }, reviewer: null },
  invalidField: { code: "invalidField", params: { field: "name", issue: "Too small: expected string to have >=1 characters" } },
  answerInvalid: { code: "answerInvalid", params: { key: "form.size", message: "form.size must be one of s, l." } },
  questionSettled: { code: "questionSettled", params: { status: "answered", by: "Ada" } },
  questionNotFound: { code: "questionNotFound", params: { id: "q_1" } },
  notFound: { code: "notFound", params: { what: "approval", id: "approval_1" } },
  editCwdRefused: { code: "editCwdRefused", params: { why: "outside", cwd: '"../elsewhere"' } },
  roleChanged: { code: "roleChanged", params: { from: "operator", to: "member" } },
  notWaitingAction: { code: "notWaitingAction" },
};

/** Every value of each parameter the catalogue words with a select (a value missing here is a type error). */
const ROLE_ACTS: Record<TRoleAct, true> = { steer: true, cancel: true, revokeGrants: true, answer: true, administer: true, readConfig: true, readWorkspace: true, readTrail: true, change: true, seeDevices: true };
const ADMIN_ACTS: Record<TAdminAct, true> = { changeRoles: true, setTeams: true, renameUsers: true, disableUsers: true, enableUsers: true, deleteUsers: true, offboardUsers: true, createKeysForOthers: true, pairDevices: true, revokeDevices: true };
const AUDITOR_ACTS: Record<TAuditorAct, true> = { createKeys: true, revokeKeys: true, requestApprovals: true, askQuestions: true, invokeAgents: true, runAgents: true, changeAccess: true };
type TParam<C extends TErrorReasonCode, K extends string> = Extract<TErrorReason, { code: C; params: Record<K, unknown> }>["params"][K];
const ROLES_ONLY_ACTS: Record<TParam<"rolesOnly", "act">, true> = { readTrail: true, exportRange: true, grantFullAccess: true, changeAccess: true };
const OWN_CHANGES: Record<TParam<"ownAccount", "change">, true> = { role: true, disable: true, enable: true, delete: true, offboard: true };
const DELETED_CHANGES: Record<TParam<"userDeleted", "change">, true> = { role: true, keys: true, disable: true, enable: true, delete: true, rename: true, offboard: true, teams: true };
const NOT_FOUND_KINDS: Record<TNotFoundKind, true> = { apiKey: true, approval: true, attachment: true, clientToolRequest: true, device: true, grant: true, interrupt: true, response: true, session: true, user: true };
const CWD_REFUSALS: Record<TCwdRefusal, true> = { noWorkspace: true, nul: true, missing: true, outside: true, notDirectory: true };
const keys = <K extends string>(record: Record<K, true>): K[] => Object.keys(record) as K[];

/** Each select branch of the new codes, so every English sentence is checked against the server's. */
const VARIANTS: TErrorReason[] = [
  ...keys(ROLE_ACTS).map((act): TErrorReason => ({ code: "roleCannot", params: { act } })),
  ...keys(ADMIN_ACTS).map((act): TErrorReason => ({ code: "adminOnly", params: { act } })),
  ...keys(AUDITOR_ACTS).map((act): TErrorReason => ({ code: "auditorReadOnly", params: { act } })),
  ...keys(ROLES_ONLY_ACTS).map((act): TErrorReason => ({ code: "rolesOnly", params: { act } })),
  ...keys(OWN_CHANGES).map((change): TErrorReason => ({ code: "ownAccount", params: { change } })),
  ...keys(DELETED_CHANGES).map((change): TErrorReason => ({ code: "userDeleted", params: { name: "Ada", change } })),
  ...keys(CWD_REFUSALS).map((why): TErrorReason => ({ code: "editCwdRefused", params: { why, cwd: '"sub/dir"' } })),
  ...keys(NOT_FOUND_KINDS).map((what): TErrorReason => ({ code: "notFound", params: { what, id: "x_1" } })),
  { code: "userStatusIs", params: { name: "Ada", status: "active" } },
  { code: "questionSettled", params: { status: "expired", by: "" } },
  { code: "questionSettled", params: { status: "cancelled", by: "Ada" } },
  { code: "editReviewDenied", params: { risk: "medium", rationale: "The reviewer failed: timeout" }, reviewer: { code: "reviewerFailed", detail: "timeout" } },
];

describe("the server's refusal codes", () => {
  test.each(Object.values(EXAMPLES))("$code reads in English exactly as the server's detail, and in Chinese", (reason) => {
    expect(en.reason(reason)).toBe(errorReasonSentence(reason));
    const chinese = zh.reason(reason);
    expect(chinese).toMatch(/[\u4e00-\u9fff]/);
    expect(chinese).not.toBe(errorReasonSentence(reason));
  });

  test.each(VARIANTS.map((reason) => [`${reason.code} ${JSON.stringify("params" in reason ? reason.params : {})}`, reason] as const))(
    "%s: every branch reads in English as the server's detail, and in Chinese",
    (_name, reason) => {
      expect(en.reason(reason)).toBe(errorReasonSentence(reason));
      const chinese = zh.reason(reason);
      expect(chinese).toMatch(/[\u4e00-\u9fff]/);
      expect(chinese).not.toContain("{");
    },
  );

  test("the Admin page's refusals, a reviewer's denial and a question's state in Chinese", () => {
    expect(zh.reason({ code: "ownAccount", params: { change: "delete" } })).toBe("你不能删除自己的账户；请让另一位管理员操作。");
    expect(zh.reason({ code: "lastAdmin", params: { name: "Ada" } })).toBe("Ada 是最后一位管理员；请先让另一位用户成为管理员。");
    expect(zh.reason({ code: "adminOnly", params: { act: "pairDevices" } })).toBe("只有管理员可以配对设备。");
    expect(zh.reason({ code: "roleCannot", params: { act: "administer" } })).toBe("你的角色不能管理此工作区。");
    // The server's own reviewer sentence is worded; a model's rationale is shown as written.
    const failed: TErrorReason = { code: "editReviewDenied", params: { risk: "high", rationale: "The reviewer failed: timeout" }, reviewer: { code: "reviewerFailed", detail: "timeout" } };
    expect(zh.reason(failed)).toBe("执行审查器拒绝了编辑后的操作（高风险）：审查器出错：timeout。没有批准任何内容；请求仍在等待中。");
    expect(zh.reason(EXAMPLES.editReviewDenied)).toBe("执行审查器拒绝了编辑后的操作（高风险）：It deletes files outside the workspace。没有批准任何内容；请求仍在等待中。");
    expect(zh.reason(EXAMPLES.questionSettled)).toBe("此问题已被回答（处理人：Ada）。");
    expect(zh.reason({ code: "questionSettled", params: { status: "expired", by: "" } })).toBe("此问题已过期。");
    expect(en.reason({ code: "questionSettled", params: { status: "expired", by: "" } })).toBe("This question is already expired.");
  });

  test("a request-shape refusal names the field in Chinese, without zod's English", () => {
    const issue = (path: PropertyKey[], extra: object = {}) => ({ path, message: "Invalid input", ...extra });
    expect(invalidFieldReason([issue(["name"]), issue(["userId"])])).toEqual({ code: "invalidField", params: { field: "name", issue: "Invalid input" } });
    expect(invalidFieldReason([issue(["grant", "days"])])?.params).toMatchObject({ field: "grant.days" });
    expect(invalidFieldReason([issue([], { code: "unrecognized_keys", keys: ["extra", "more"] })])?.params).toMatchObject({ field: "extra, more" });
    expect(invalidFieldReason([issue([])])?.params).toMatchObject({ field: "input" });
    expect(invalidFieldReason([])).toBeNull();
    const reason = invalidFieldReason([issue(["name"])]);
    expect(zh.reason(reason)).toBe("字段 name 无效。");
    expect(en.reason(reason)).toBe("The field name is not valid: Invalid input.");
  });

  test("plural and select forms follow their parameters in both languages", () => {
    for (const n of [1, 4]) {
      const reason: TErrorReason = { code: "bulkHighRisk", params: { n } };
      expect(en.reason(reason)).toBe(errorReasonSentence(reason));
    }
    const single: TErrorReason = { code: "bulkNotYours", params: { n: 1 }, refusal: { code: "auditor" } };
    expect(en.reason(single)).toBe(errorReasonSentence(single));
    expect(zh.reason(single)).toBe("所选审批中有 1 个不由你决定，因此没有做出任何决定：你的角色不能决定审批。");
    const steer: TErrorReason = { code: "responseClosed", params: { status: "cancelled", act: "steer" } };
    expect(en.reason(steer)).toBe(errorReasonSentence(steer));
    // The response's status is the console's own word for it.
    expect(zh.reason(steer)).toBe(`该响应的状态已是 ${CATALOGUES["zh-CN"].vocab.responseStatus.cancelled}；引导已关闭。`);
  });

  test("an unknown code, or none, is no sentence of the console's: the server's English is shown", () => {
    expect(zh.reason({ code: "somethingNew" })).toBeNull();
    expect(zh.reason("forbidden")).toBeNull();
    expect(zh.reason({ code: "toString" })).toBeNull();
    expect(zh.reason(null)).toBeNull();
  });
});

/** Procedures built with the console's own tRPC setup, throwing the server's refusals. */
const testRouter = router({
  fail: publicProcedure.input(z.strictObject({ code: z.string() })).mutation(({ input }) => {
    if (input.code === "uncoded") throw new DomainError("forbidden", "Only admins and auditors can read the admin trail.");
    const reason = EXAMPLES[input.code as TErrorReasonCode];
    const status = { alreadyDecided: "already_decided", bindingChanged: "binding_changed", editInvalid: "validation_failed", ownRun: "forbidden" } as const;
    throw refused(status[input.code as keyof typeof status] ?? "conflict", reason);
  }),
});
const client = createTRPCClient<typeof testRouter>({
  links: [
    httpBatchLink({
      url: "http://console.test/api/trpc",
      fetch: checkedFetch((input, init) => fetchRequestHandler({ endpoint: "/api/trpc", req: new Request(input as string, init), router: testRouter, createContext: () => ({}) as TTrpcContext })),
    }),
  ],
});
const failure = async (code: string): Promise<unknown> => client.fail.mutate({ code }).then(() => expect.fail("the call did not fail"), (error: unknown) => error);
const errorsT = (locale: TLocale) => createTranslator({ locale, messages: CATALOGUES[locale], namespace: "errors" });
const inChinese = async (code: string) => errorSentence(await failure(code), "decide", errorsT("zh-CN"), zh.reason);

describe("a refused request's sentence in the page's language", () => {
  test("a 403 of the separation-of-duties rule, a 409 and a 422 are worded in Chinese from their code", async () => {
    expect(await inChinese("ownRun")).toBe("这是你发起的运行；智能体“scripted”要求由另一个人批准。");
    expect(await inChinese("alreadyDecided")).toBe("此审批已被拒绝；每个决定只能使用一次。你的决定没有被采用。");
    expect(await inChinese("bindingChanged")).toBe("等待中的操作已与批准的内容不一致；决定没有被应用。请查看当前的请求后重新决定。");
    expect(await inChinese("editInvalid")).toBe("你的决定未被接受：编辑后的参数对 exec 无效：command: command must not be empty。没有批准任何内容。 请修改后重试。");
  });

  test("in English the sentence is the one the console showed before codes", async () => {
    expect(errorSentence(await failure("alreadyDecided"), "decide", errorsT("en"), en.reason)).toBe("This approval was already denied; a decision is used once. Your decision was not used.");
    expect(errorSentence(await failure("alreadyDecided"), "decide")).toBe("This approval was already denied; a decision is used once. Your decision was not used.");
  });

  test("a refusal without a code keeps the server's English words", async () => {
    expect(await inChinese("uncoded")).toBe("Only admins and auditors can read the admin trail.");
  });
});

describe("the approval's one-line summary", () => {
  const exec = (args: { command: string; cwd?: string }, cwd: string | null) => ({ action: execTool.action, arguments: args, message: execTool.describe(args, cwd) });

  test("a built-in tool's summary reads in English exactly as the tool wrote it", () => {
    for (const a of [
      exec({ command: "ls -la" }, "."),
      exec({ command: "make test", cwd: "app" }, "app"),
      exec({ command: "echo `date` { } 'x'" }, null),
      { action: echoTool.action, arguments: { text: "hi \"there\"" }, message: echoTool.describe({ text: "hi \"there\"" }, null) },
    ]) {
      expect(en.summary(a)).toBe(a.message);
    }
  });

  test("and in Chinese from its facts: the command, the working directory, the device", () => {
    expect(zh.summary(exec({ command: "ls -la" }, "."))).toBe("在工作区中运行 `ls -la`？");
    expect(zh.summary(exec({ command: "make test", cwd: "app" }, "app"))).toBe("在 ./app 中运行 `make test`？");
    expect(zh.summary({ action: echoTool.action, arguments: { text: "hi" }, message: echoTool.describe({ text: "hi" }, null) })).toBe('回显 "hi"？');
    const device = { id: "dev_1", name: "build-box" } as TDeviceRow;
    for (const args of [{ command: "uptime" }, { command: "restart", args: ["web", "--now"] }]) {
      const target = approvalTarget(device, args as never, null);
      const a = { action: target.action, arguments: { device: "build-box", ...args }, message: target.describe(args, null) };
      expect(en.summary(a)).toBe(a.message);
      expect(zh.summary(a)).toBe(`在设备 build-box (dev_1) 上运行 ${args.command}${args.args ? ` ${JSON.stringify(args.args)}` : ""}？`);
    }
    // With the commands the agent's harness declared for the attempt: whether this one is among them.
    const declared = (command: string) => {
      const target = approvalTarget(device, { command } as never, ["uptime", "df"]);
      return { action: target.action, arguments: { device: "build-box", command }, message: target.describe({ command }, null) };
    };
    expect(en.summary(declared("uptime"))).toBe("Run uptime on device build-box (dev_1)? The agent's harness declared this command (it declared: uptime, df).");
    expect(en.summary(declared("reboot"))).toBe(declared("reboot").message);
    expect(declared("reboot").message).toContain("did not declare this command (it declared: uptime, df).");
    expect(zh.summary(declared("uptime"))).toBe("在设备 build-box (dev_1) 上运行 uptime？代理的 harness 声明了此命令（它声明的命令：uptime, df）。");
    expect(zh.summary(declared("reboot"))).toBe("在设备 build-box (dev_1) 上运行 reboot？代理的 harness 没有声明此命令（它声明的命令：uptime, df）。");
  });

  test("the trail's approval.requested line uses the same wording", () => {
    const approval = { ...exec({ command: "ls" }, "."), risk: "medium" };
    const event = { type: "approval.requested", data: { approval }, actorUserId: null, transport: null } as Parameters<typeof describeEvent>[0];
    const tEvent = createTranslator({ locale: "zh-CN", messages: CATALOGUES["zh-CN"], namespace: "event" });
    expect(describeEvent(event, () => "", tEvent, zh.summary)).toBe("请求审批：tool:exec（medium 风险）— 在工作区中运行 `ls`？");
    expect(describeEvent(event, () => "")).toBe("Approval requested: tool:exec (medium risk) — Run `ls` in the workspace?");
  });

  test("any other summary is shown as written: another tool's, or a client's own words for a built-in tool", () => {
    const mcp = { action: "mcp:files.read", arguments: { path: "/etc/hosts" }, message: "Call read on the MCP server files with {\"path\":\"/etc/hosts\"}?" };
    expect(zh.summary(mcp)).toBe(mcp.message);
    const ownWords = { action: "tool:exec", arguments: { command: "ls" }, message: "Deploy the site (runs ls first)." };
    expect(zh.summary(ownWords)).toBe(ownWords.message);
    expect(zh.summary({ action: "tool:exec", arguments: { command: "rm -rf /" }, message: execTool.describe({ command: "ls" }, ".") })).toBe("Run `ls` in the workspace?");
  });
});

describe("the built-in tools' and agents' descriptions", () => {
  const tools = new Map([...BUILTIN_AGENTS.flatMap((a) => a.tools), nodeInvokeTool].map((t) => [t.name, t.description]));

  test("every built-in tool and agent has its description in the catalogue, as configured in English and translated", () => {
    expect(Object.keys(CATALOGUES.en.serverText.tool).sort()).toEqual([...tools.keys()].sort());
    for (const [name, description] of tools) {
      expect(en.toolDescription(name, description)).toBe(description);
      expect(zh.toolDescription(name, description)).toMatch(/[\u4e00-\u9fff]/);
    }
    expect(Object.keys(CATALOGUES.en.serverText.agent).sort()).toEqual(BUILTIN_AGENTS.map((a) => a.name).sort());
    for (const a of BUILTIN_AGENTS) {
      expect(en.agentDescription(a.name, a.description ?? "")).toBe(a.description);
      expect(zh.agentDescription(a.name, a.description ?? "")).toMatch(/[\u4e00-\u9fff]/);
    }
    expect(zh.toolDescription("exec", execTool.description)).toBe("在会话工作区中运行一条 shell 命令。");
  });

  test("a configured description other than the built-in one is shown as configured", () => {
    expect(zh.toolDescription("exec", "Run a command on the build farm.")).toBe("Run a command on the build farm.");
    expect(zh.toolDescription("deploy", "Deploy the site.")).toBe("Deploy the site.");
    expect(zh.agentDescription("scripted", "Our own agent.")).toBe("Our own agent.");
    expect(zh.agentDescription("toString", "x")).toBe("x");
  });
});
