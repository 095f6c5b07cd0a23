import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { evaluatePredicateList, type TApprovalPolicy } from "../core/agent-policy";
import type { TRisk } from "../core/vocabulary";
import type { TActionPolicy, TAgentConfig } from "./types";

/**
 * The policy of actions callers run themselves (external approvals). An agent's `actions` names
 * them exactly, by `*`, or by a pattern such as `coding:*`; the most specific entry wins (an exact
 * name, then the pattern with the most fixed characters, then `*`). A name no entry matches gets
 * the installation's default external policy, unless the agent accepts declared names only.
 */

/** The installation's default for an action nobody declared: a person approves, risk medium. */
export const DEFAULT_ACTION_POLICY: TActionPolicy = { approval: "always", risk: "medium" };

const matchesPattern = (pattern: string, name: string): boolean =>
  new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(name);

/**
 * The entry of `actions` that governs `name`, or null when none does. `declared` is true for an
 * exact entry or a pattern other than `*`.
 */
function entryFor(actions: Record<string, TActionPolicy> | undefined, name: string): { policy: TActionPolicy; declared: boolean } | null {
  if (!actions) return null;
  if (Object.hasOwn(actions, name)) return { policy: actions[name] as TActionPolicy, declared: true };
  const patterns = Object.keys(actions)
    .filter((key) => key !== "*" && key.includes("*") && matchesPattern(key, name))
    .sort((a, b) => b.replace(/\*/g, "").length - a.replace(/\*/g, "").length);
  if (patterns[0] !== undefined) return { policy: actions[patterns[0]] as TActionPolicy, declared: true };
  return Object.hasOwn(actions, "*") ? { policy: actions["*"] as TActionPolicy, declared: false } : null;
}

/**
 * The policy of the action `name` for `agent`: its entry, `*`, or the default. Null when the
 * agent accepts declared actions only and none of its entries names this one.
 */
export function actionPolicyFor(agent: Pick<TAgentConfig, "actions" | "externalActions">, name: string): TActionPolicy | null {
  const entry = entryFor(agent.actions, name);
  if (agent.externalActions === "declared") return entry?.declared ? entry.policy : null;
  return entry?.policy ?? DEFAULT_ACTION_POLICY;
}

/**
 * The gate before one external action: the action's approval unless the first of its predicates
 * that sets one says otherwise, and the risk a matching predicate fixes.
 */
export function actionGate(policy: TActionPolicy, args: unknown): { policy: TApprovalPolicy; fixedRisk?: TRisk } {
  const predicate = evaluatePredicateList(policy.predicates ?? [], args);
  return { policy: predicate.approval ?? policy.approval, ...(predicate.risk ? { fixedRisk: predicate.risk } : {}) };
}

// `format` is an annotation, as JSON Schema 2020-12 has it by default; unknown keywords are refused.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, validateFormats: false, logger: false });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Why `schema` is not a usable JSON Schema (2020-12), or null when it is. */
export function schemaProblem(schema: Record<string, unknown>): string | null {
  try {
    validatorOf(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** `arguments.to: must be string`: one line per problem, each naming its field. */
function describe(error: ErrorObject): string {
  const at = error.instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (error.keyword === "required" && params.missingProperty) return `${["arguments", ...at, params.missingProperty].join(".")}: is required`;
  if (error.keyword === "additionalProperties" && params.additionalProperty) return `${["arguments", ...at, params.additionalProperty].join(".")}: is not allowed`;
  return `${["arguments", ...at].join(".")}: ${error.message ?? "is invalid"}`;
}

/** The problems of `args` under the action's schema (empty when it has none or they satisfy it). */
export function actionArgumentProblems(policy: TActionPolicy, args: unknown): string[] {
  if (!policy.schema) return [];
  const validate = validatorOf(policy.schema);
  if (validate(args)) return [];
  return [...new Set((validate.errors ?? []).map(describe))];
}
