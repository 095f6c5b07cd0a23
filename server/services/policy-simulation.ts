import { createHash } from "node:crypto";
import { z } from "zod";
import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { decidersByIds, recordedRequests, type TRecordedRequest } from "../../db/repositories/policy-evidence";
import { actionPolicyFor } from "../agents/actions";
import { parseAgentsFile } from "../agents/file-config";
import { hostToolFor, requestGate } from "../agents/request-gate";
import type { TAgentConfig } from "../agents/types";
import type { TActor } from "../core/actor";
import type { TAdminWho } from "../core/admin-trail";
import { DomainError, refused } from "../core/errors";
import { DEFAULT_SELF_APPROVAL, decisionRefusalCode, requiredApprovalsFor } from "../core/separation-of-duties";
import { AUTO_OUTCOMES } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { grantScopesOf } from "../mcp/policy";
import { DEFAULT_SUGGESTION_DAYS, MAX_SUGGESTION_DAYS } from "./policy-suggestions";

/**
 * Policy simulation (docs/analytics.md#policy-simulation): the window's recorded requests replayed
 * through a candidate agents file with the gate code the live server uses (who decides a request:
 * `requestGate`; who may decide it: `decisionRefusalCode`; how many: `requiredApprovalsFor`;
 * grants by the kinds the agent allows). The exec reviewer is never called: its recorded verdict
 * stands, and a request it never saw counts as put to a person. Nothing changes but one admin-trail row.
 */

const DAY_MS = 86_400_000;
const BATCH = 5000;

export const ZSimulationInput = z.strictObject({
  file: z.unknown().describe("The candidate agents file (its JSON)"),
  days: z.number().int().min(1).max(MAX_SUGGESTION_DAYS, `days must be at most ${MAX_SUGGESTION_DAYS}`).default(DEFAULT_SUGGESTION_DAYS),
});

const ZRow = z.object({
  agent: z.string(),
  action: z.string(),
  requests: z.number().int(),
  nowWithoutPerson: z.number().int().describe("Put to a person then; settled without one under the candidate"),
  nowWithoutPersonDenied: z.number().int().describe("…of which a person had denied (or replied to): the dangerous ones"),
  nowWithoutPersonEdited: z.number().int().describe("…of which a person had approved only after an edit"),
  nowAsksPerson: z.number().int().describe("Settled without a person then; put to one under the candidate"),
  unavailable: z.number().int().describe("The candidate has no such agent or tool, or refuses the action"),
  deciderRefused: z.number().int().describe("Decided by someone the candidate's approvers or self-approval rule would refuse"),
  quorumRaised: z.number().int().describe("Decided with fewer approvers than the candidate's quorum needs"),
  unchanged: z.number().int(),
});

export const ZSimulation = z.object({
  days: z.number().int(),
  from: z.string(),
  to: z.string(),
  requests: z.number().int().describe("Recorded requests replayed"),
  totals: ZRow.omit({ agent: true, action: true }),
  rows: z.array(ZRow).describe("Per agent and action; the rows with dangerous changes first"),
  dangerous: z.array(z.object({ id: z.string(), agent: z.string(), action: z.string(), outcome: z.string(), arguments: z.unknown(), createdAt: z.string() })).describe("Up to 50 requests a person denied or edited that the candidate would let through"),
});
export type TSimulation = z.infer<typeof ZSimulation>;
type TCounts = Omit<z.infer<typeof ZRow>, "agent" | "action">;

const zero = (): TCounts => ({ requests: 0, nowWithoutPerson: 0, nowWithoutPersonDenied: 0, nowWithoutPersonEdited: 0, nowAsksPerson: 0, unavailable: 0, deciderRefused: 0, quorumRaised: 0, unchanged: 0 });
const isAuto = (outcome: string) => (AUTO_OUTCOMES as readonly string[]).includes(outcome);

/** How the candidate's gate settles one recorded request: without a person (and how), by a person, or not at all. */
function candidateGate(agent: TAgentConfig | undefined, r: TRecordedRequest): "auto" | "person" | "unavailable" {
  if (!agent) return "unavailable";
  const gate = requestGate(agent, r);
  if (!gate) return "unavailable";
  if (gate.policy === "never") return "auto";
  if (gate.policy === "review" && (r.verdict === "allow" || r.verdict === "deny")) return "auto";
  // A standing grant settled it then; the candidate still allows grants of some kind.
  if (r.outcome === "grant" && grantScopesOf(agent).length > 0) return "auto";
  return "person";
}

/** Who may decide and how many, as the candidate has it for this request: the action's own approvers and quorum, else the agent's. */
function decisionRuleOf(agent: TAgentConfig, r: TRecordedRequest) {
  const action = r.external && !hostToolFor(agent, r.action) ? actionPolicyFor(agent, r.action) : null;
  const gate = requestGate(agent, r);
  const risk = gate?.fixedRisk ?? r.risk;
  return {
    policy: { agent: agent.name, selfApproval: agent.selfApproval ?? DEFAULT_SELF_APPROVAL, approvers: action?.approvers ?? agent.approvers },
    required: requiredApprovalsFor(action?.quorum ?? agent.quorum, risk),
  };
}

/** Replays the window through the candidate file (admins, operators and auditors); records who simulated what. */
export async function simulatePolicy(
  deps: Pick<TDeps, "db" | "now"> & { config?: Pick<TDeps["config"], "environment"> },
  who: TAdminWho,
  input: z.output<typeof ZSimulationInput>,
): Promise<TSimulation> {
  if (who.actor && who.actor.role === "member") throw refused("forbidden", { code: "roleCannot", params: { act: "readConfig" } });
  let agents: TAgentConfig[];
  try {
    agents = parseAgentsFile(input.file, "candidate agents file", deps.config?.environment ?? {}).agents;
  } catch (error) {
    throw new DomainError("validation_failed", error instanceof Error ? error.message : String(error));
  }
  const byName = new Map(agents.map((a) => [a.name, a]));
  const to = deps.now();
  const from = new Date(to.getTime() - input.days * DAY_MS);
  const rows = new Map<string, TCounts & { agent: string; action: string }>();
  const totals = zero();
  const dangerous: TSimulation["dangerous"] = [];
  const deciders = new Map<string, TActor | null>();
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const batch = await recordedRequests(deps.db, { from, to, after, limit: BATCH });
    if (batch.length === 0) break;
    const unknown = [...new Set(batch.flatMap((r) => (r.decidedBy && !deciders.has(r.decidedBy) ? [r.decidedBy] : [])))];
    for (const d of await decidersByIds(deps.db, unknown)) deciders.set(d.userId, { userId: d.userId, role: d.role, name: d.name, email: d.email, groups: d.groups });
    for (const id of unknown) if (!deciders.has(id)) deciders.set(id, null);
    for (const r of batch) {
      const key = `${r.agent}\u0000${r.action}`;
      const row = rows.get(key) ?? { agent: r.agent, action: r.action, ...zero() };
      rows.set(key, row);
      const counts: TCounts[] = [row, totals];
      const add = (field: keyof TCounts) => {
        for (const c of counts) c[field]++;
      };
      add("requests");
      const agent = byName.get(r.agent);
      const now = candidateGate(agent, r);
      const wasAuto = isAuto(r.outcome);
      if (now === "unavailable") add("unavailable");
      else if (now === "auto" && !wasAuto) {
        add("nowWithoutPerson");
        const denied = r.outcome === "denied" || r.outcome === "replied";
        if (denied) add("nowWithoutPersonDenied");
        if (r.outcome === "edited") add("nowWithoutPersonEdited");
        if ((denied || r.outcome === "edited") && dangerous.length < 50) {
          dangerous.push({ id: r.id, agent: r.agent, action: r.action, outcome: r.outcome, arguments: r.arguments, createdAt: r.createdAt.toISOString() });
        }
      } else if (now === "person" && wasAuto) add("nowAsksPerson");
      else {
        add("unchanged");
        // Put to a person under both: would the candidate still accept who decided, and as many?
        if (now === "person" && agent && r.decidedBy) {
          const rule = decisionRuleOf(agent, r);
          const decider = deciders.get(r.decidedBy);
          if (decider && decisionRefusalCode(decider, { userId: r.userId, requiredApprovals: 1 }, rule.policy) !== null) add("deciderRefused");
          if (rule.required > r.requiredApprovals) add("quorumRaised");
        }
      }
    }
    const last = batch[batch.length - 1] as TRecordedRequest;
    after = { at: last.cursorAt, id: last.id };
    if (batch.length < BATCH) break;
  }
  const danger = (c: TCounts) => c.nowWithoutPersonDenied + c.nowWithoutPersonEdited;
  const result: TSimulation = {
    days: input.days,
    from: from.toISOString(),
    to: to.toISOString(),
    requests: totals.requests,
    totals,
    rows: [...rows.values()].sort((a, b) => danger(b) - danger(a) || b.nowWithoutPerson - a.nowWithoutPerson || b.requests - a.requests || a.agent.localeCompare(b.agent) || a.action.localeCompare(b.action)),
    dangerous,
  };
  const fileHash = createHash("sha256").update(JSON.stringify(input.file)).digest("hex").slice(0, 16);
  await deps.db.transaction(async (tx) =>
    recordAdminEvent(tx as unknown as Db, who, {
      action: "policy.simulated",
      targetType: "agents_file",
      targetId: fileHash,
      detail: { days: input.days, agents: agents.map((a) => a.name), requests: totals.requests, nowWithoutPerson: totals.nowWithoutPerson, dangerous: danger(totals), nowAsksPerson: totals.nowAsksPerson },
    }),
  );
  return result;
}
