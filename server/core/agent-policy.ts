import type { TRole, TRisk } from "./vocabulary";

/** `always`: a person decides; `never`: runs without a prompt; `review`: the exec reviewer decides first. */
export type TApprovalPolicy = "always" | "review" | "never";

/**
 * A condition on one argument of a tool call: `regex` (a JavaScript regular expression the
 * argument's text must match) or `prefix` (the text must start with it; for paths, a whole
 * path segment: `/srv` matches `/srv` and `/srv/x`, not `/srvx`).
 */
export type TArgumentMatch = { argument: string; regex?: string; prefix?: string };

/**
 * An argument predicate of an agent's tool or action: when every `match` holds, it sets the call's
 * risk (raise or lower) and/or who decides: `always` a person, `never` nobody, whatever the tool's
 * or action's own `approval` says. The first matching predicate that sets a risk wins, and the
 * first matching predicate that sets an approval wins (so order them from specific to general).
 */
export type TArgumentPredicate = { match: TArgumentMatch[]; risk?: TRisk; approval?: "always" | "never" };

/**
 * Who may decide an agent's approvals besides the role rule: people of these roles, with these
 * emails, or in these teams (the groups single sign-on gives a person, docs/sso.md).
 */
export type TApprovers = { roles?: TRole[]; users?: string[]; groups?: string[] };

/**
 * The policy part of an agent: what a run copies when it starts (`responses.agent_policy`) and
 * keeps until it ends, whatever a configuration reload changes meanwhile.
 */
export type TAgentPolicy = {
  approval: Record<string, TApprovalPolicy>;
  predicates?: Record<string, TArgumentPredicate[]>;
  selfApproval?: "never" | "operators" | "always";
  quorum?: { high?: number };
  approvers?: TApprovers;
  grants?: { session?: boolean; maxDays?: number };
  reviewEdits?: boolean;
  exec?: { network?: boolean; env?: string[] };
};

/** The keys of `TAgentPolicy`, in the order a snapshot lists them. */
export const AGENT_POLICY_KEYS = ["approval", "predicates", "selfApproval", "quorum", "approvers", "grants", "reviewEdits", "exec"] as const;

/** The policy fields of an agent config, as plain JSON (what a run stores). */
export function agentPolicyOf(agent: TAgentPolicy): TAgentPolicy {
  const out: Record<string, unknown> = {};
  for (const key of AGENT_POLICY_KEYS) if (agent[key] !== undefined) out[key] = agent[key];
  return JSON.parse(JSON.stringify(out)) as TAgentPolicy;
}

const argumentText = (args: unknown, name: string): string | null => {
  if (!args || typeof args !== "object") return null;
  const value = (args as Record<string, unknown>)[name];
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(String).join(" ");
  return null;
};

const matches = (m: TArgumentMatch, args: unknown): boolean => {
  const text = argumentText(args, m.argument);
  if (text === null) return false;
  if (m.regex !== undefined && !new RegExp(m.regex).test(text)) return false;
  if (m.prefix !== undefined) {
    const p = m.prefix;
    if (!text.startsWith(p)) return false;
    // A path prefix matches whole segments only.
    if (p.endsWith("/") || text.length === p.length || !p.startsWith("/")) return true;
    return text[p.length] === "/";
  }
  return true;
};

/** What a list of argument predicates says about one call: a risk override and who decides, each from the first matching predicate that sets it. */
export type TPredicateOutcome = { risk?: TRisk; approval?: "always" | "never" };

/** Evaluates `list` against the call's arguments (see {@link TArgumentPredicate}). */
export function evaluatePredicateList(list: readonly TArgumentPredicate[], args: unknown): TPredicateOutcome {
  const outcome: TPredicateOutcome = {};
  for (const predicate of list) {
    if (!predicate.match.every((m) => matches(m, args))) continue;
    if (outcome.risk === undefined && predicate.risk) outcome.risk = predicate.risk;
    if (outcome.approval === undefined && predicate.approval) outcome.approval = predicate.approval;
  }
  return outcome;
}

/** What the agent's argument predicates say about one call of `toolName`. */
export function evaluatePredicates(policy: Pick<TAgentPolicy, "predicates">, toolName: string, args: unknown): TPredicateOutcome {
  return evaluatePredicateList(policy.predicates?.[toolName] ?? [], args);
}
