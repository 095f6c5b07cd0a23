import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { approvals } from "../../db/schema";
import { BUILTIN_AGENTS } from "../../server/agents/catalog";
import type { TAgentConfig } from "../../server/agents/types";
import type { TRequiredAction } from "../../server/core/envelope";
import type { TTestApp, TTestUser } from "../../server/testing/test-app";
import { execTurn, invoke, rows, script, tableCounts, type TBody, workspaceOf } from "./helpers";
import { type TCaller, trpcGet, trpcPost } from "./security-helpers";

const scripted = BUILTIN_AGENTS.find((a) => a.name === "scripted") as TAgentConfig;

/** The demo agent with other separation-of-duties settings (registered by startTestApp). */
export const SOD_AGENTS: TAgentConfig[] = [
  { ...scripted, name: "sod-never", selfApproval: "never" },
  { ...scripted, name: "sod-always", selfApproval: "always" },
  { ...scripted, name: "sod-quorum", quorum: { high: 2 } },
];

export type TApprovalAction = Extract<TRequiredAction, { type: "human_approval" }>;

/** Starts a run of `agent` whose only step is an `exec` of `command`; returns its pending approval and the workspace on disk. */
export async function startRun(app: TTestApp, user: TTestUser, command: string, agent = "scripted"): Promise<{ env: TBody; approval: TApprovalAction; cwd: string }> {
  const env = await invoke(app, user.apiKey, script([execTurn(command), { text: "done" }]), { agent });
  expect(env.status, JSON.stringify(env)).toBe("requires_action");
  const approval = env.requiredAction as TApprovalAction;
  expect(approval.type).toBe("human_approval");
  return { env, approval, cwd: workspaceOf(app, env.sessionId) };
}

/** The stored approval row (to prove a refused decision changed nothing). */
export const approvalRow = async (app: TTestApp, id: string) => (await app.deps.db.select().from(approvals).where(eq(approvals.id, id)))[0];

/** Row counts of every table a decision could write, votes included. */
export async function decisionState(app: TTestApp) {
  const [votes] = await rows<{ n: number | string }>(app, "select count(*) as n from approval_votes");
  const [grants] = await rows<{ n: number | string }>(app, "select count(*) as n from grants");
  return { ...(await tableCounts(app)), approval_votes: Number(votes?.n ?? 0), grants: Number(grants?.n ?? 0) };
}

/** Votes recorded on an approval: who and how, oldest first. */
export const votesOn = (app: TTestApp, approvalId: string) =>
  rows<{ user_id: string; decision: string; via: string }>(app, `select user_id, decision, via from approval_votes where approval_id = '${approvalId}' order by created_at`);

/** A tRPC error as the console receives it: status, message and the domain code. */
export type TTrpcOutcome = { status: number; message: string | undefined; domainCode: string | undefined; serverText: unknown; data: unknown };

const outcomeOf = ({ status, body }: { status: number; body: Record<string, unknown> }): TTrpcOutcome => {
  const error = body.error as { message?: string; data?: { domainCode?: string; serverText?: unknown } } | undefined;
  return { status, message: error?.message, domainCode: error?.data?.domainCode, serverText: error?.data?.serverText, data: (body.result as { data?: unknown } | undefined)?.data };
};

/** `approvals.decide` as the console sends it (with the binding hash the approver saw). */
export async function consoleDecide(app: TTestApp, caller: TCaller, approvalId: string, decision: "approve" | "deny"): Promise<TTrpcOutcome> {
  const row = await approvalRow(app, approvalId);
  return outcomeOf(await trpcPost(app, caller, "approvals.decide", { approvalId, decision, bindingHash: row?.bindingHash }));
}

/** `inbox.decideMany` for these approvals. */
export async function consoleDecideMany(app: TTestApp, caller: TCaller, approvalIds: string[], decision: "approve" | "deny"): Promise<TTrpcOutcome> {
  const items = await Promise.all(approvalIds.map(async (approvalId) => ({ approvalId, bindingHash: (await approvalRow(app, approvalId))?.bindingHash })));
  return outcomeOf(await trpcPost(app, caller, "inbox.decideMany", { decision, items }));
}

/** One pending row of the console's inbox as `caller` sees it. */
export type TInboxView = { id: string; refusal: string | null; requiredApprovals: number; votes: Array<{ userId: string; name: string; email: string; decision: string; via: string }> };

export async function inboxRow(app: TTestApp, caller: TCaller, approvalId: string): Promise<TInboxView | undefined> {
  const { status, body } = await trpcGet(app, caller, "inbox.list", { status: "pending", limit: 200 });
  expect(status, JSON.stringify(body)).toBe(200);
  const rowsSeen = ((body.result as { data: { rows: TInboxView[] } }).data.rows ?? []) as TInboxView[];
  return rowsSeen.find((r) => r.id === approvalId);
}
