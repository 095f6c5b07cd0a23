import { createHash, randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { z } from "zod";
import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { decisionEvidence, matchedDecisions, type TDecisionEvidence } from "../../db/repositories/policy-evidence";
import { shadowCounts } from "../../db/repositories/analytics";
import { dismissChange, dismissedChanges } from "../../db/repositories/policy-suggestions";
import { FILE_TOOLS, parseAgentsFile } from "../agents/file-config";
import { requestGate } from "../agents/request-gate";
import type { TAgentConfig } from "../agents/types";
import type { TActor } from "../core/actor";
import type { TAdminWho } from "../core/admin-trail";
import type { TArgumentPredicate } from "../core/agent-policy";
import { DomainError, refused } from "../core/errors";
import type { TDeps } from "../host/deps";

/**
 * Rule suggestions from history (docs/analytics.md#rule-suggestions): from what people decided in
 * a window, the changes to the agents file that would ask less (a request approved every time by
 * several people) or ask more carefully (a request denied every time). Never a loosening of a
 * request a person denied, edited or let expire. An admin applies one (the file rewritten
 * atomically, the previous one kept beside it, the configuration reloaded, a trail row) or
 * dismisses it.
 */

export const DEFAULT_SUGGESTION_DAYS = 14;
/** Suggestions read the same history the analytics read: at most a year. */
export const MAX_SUGGESTION_DAYS = 365;
/**
 * A tightening needs this many denials of the same request in the window, all of them. Not set by
 * the contract: five keeps a request denied once or twice (a person's one-off judgement) from
 * becoming a rule, while a request refused every day of a work week qualifies.
 */
export const TIGHTEN_MIN_DENIALS = 5;

const DAY_MS = 86_400_000;

export const ZSuggestionWindow = z.strictObject({
  days: z.number().int().min(1).max(MAX_SUGGESTION_DAYS, `days must be at most ${MAX_SUGGESTION_DAYS}`).default(DEFAULT_SUGGESTION_DAYS),
});

const ZPredicate = z.object({
  match: z.array(z.object({ argument: z.string(), regex: z.string().optional(), prefix: z.string().optional() })),
  risk: z.enum(["low", "medium", "high"]).optional(),
  approval: z.enum(["always", "never"]).optional(),
});

export const ZSuggestion = z.object({
  id: z.string().describe("Names this change to this version of the agents file; a changed file gives new ids"),
  kind: z
    .enum(["loosen", "tighten", "promote"])
    .describe("loosen: nobody is asked for these requests; tighten: a person is always asked, at high risk; promote: the agent's shadow policy becomes its live one"),
  agent: z.string(),
  action: z.string(),
  toolName: z.string(),
  external: z.boolean().describe("The requests came from outside (POST /v1/approvals)"),
  arguments: z.unknown().describe("The arguments seen (the rule matches exactly these texts)"),
  predicate: ZPredicate.nullable().describe("The argument predicate the change adds first in its list (null: promote)"),
  shadow: z
    .object({ differed: z.number().int(), wouldAutoApprove: z.number().int(), wouldAutoApproveDenied: z.number().int(), wouldAutoApproveEdited: z.number().int(), wouldAsk: z.number().int() })
    .optional()
    .describe("promote: what the shadow would have decided differently in the window"),
  target: z.string().nullable().describe("Where in the agents file: agents[name].tools.exec.predicates, …; null when the agent is not in the file"),
  evidence: z.object({
    summary: z.string().describe("One sentence: how often, how it ended, by how many people"),
    days: z.number().int(),
    from: z.string(),
    to: z.string(),
    requests: z.number().int().describe("Requests the rule would have matched in the window, all put to people"),
    approved: z.number().int(),
    denied: z.number().int(),
    people: z.number().int().describe("Distinct approvers (loosen) or deniers (tighten)"),
    matched: z.array(z.object({ id: z.string(), responseId: z.string(), createdAt: z.string(), outcome: z.string(), arguments: z.unknown() })).describe("The latest of them"),
  }),
  diff: z.string().nullable().describe("The change as a unified diff of the agents file (null without one)"),
  appliable: z.boolean().describe("An admin may apply it to the agents file"),
  reason: z.string().optional().describe("Why it cannot be applied"),
  file: z.unknown().optional().describe("Without an agents file: a file holding the agent with the change, to review and install"),
});
export type TSuggestion = z.infer<typeof ZSuggestion>;

/** The agents file as it is on disk now: its text, hash and JSON (null: the installation has none). */
type TFileNow = { path: string; text: string; hash: string; json: TRawFile };
type TRawFile = { agents?: Array<Record<string, unknown>>; [key: string]: unknown };

function fileNow(deps: Pick<TDeps, "agentsConfig">): TFileNow | null {
  const path = deps.agentsConfig?.effective().path ?? null;
  if (!path) return null;
  const text = readFileSync(path, "utf8");
  let json: TRawFile;
  try {
    json = JSON.parse(text) as TRawFile;
  } catch {
    throw new DomainError("conflict", `The agents file ${path} is not valid JSON now; fix it before asking for suggestions.`);
  }
  return { path, text, hash: createHash("sha256").update(text).digest("hex"), json };
}

const NO_FILE_HASH = "00000000";

/** Each argument's exact text (as predicates read it), or null when one cannot be matched exactly (an object, a list) or there is none. */
function exactTexts(args: unknown): Record<string, string> | null {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  const entries = Object.entries(args as Record<string, unknown>);
  if (entries.length === 0) return null;
  const texts: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (typeof value === "string") texts[name] = value;
    else if (typeof value === "number" || typeof value === "boolean") texts[name] = String(value);
    else return null;
  }
  return texts;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** A rule matching exactly these texts, nothing broader: `^…$` around each, escaped. */
const exactMatch = (texts: Record<string, string>): TArgumentPredicate["match"] => Object.entries(texts).map(([argument, text]) => ({ argument, regex: `^${escapeRegex(text)}$` }));

/** Where the request's policy lives in an agent's file entry. */
function sectionOf(entry: Record<string, unknown>, e: Pick<TDecisionEvidence, "external" | "toolName" | "action">): { section: "tools" | "nativeTools" | "actions"; name: string } | null {
  const has = (section: string, name: string) => Object.hasOwn((entry[section] as Record<string, unknown> | undefined) ?? {}, name);
  if (!e.external) {
    if (has("tools", e.toolName)) return { section: "tools", name: e.toolName };
    if (has("nativeTools", e.toolName)) return { section: "nativeTools", name: e.toolName };
    return null;
  }
  const tool = Object.keys((entry.tools as Record<string, unknown> | undefined) ?? {}).find((name) => {
    const t = FILE_TOOLS[name];
    return t?.kind === "host" && (t.name === e.action || t.action === e.action);
  });
  if (tool) return { section: "tools", name: tool };
  if (has("actions", e.action)) return { section: "actions", name: e.action };
  return null;
}

/** The file with the predicate first in its list (a new JSON value; the input is left as it is). */
function withPredicate(json: TRawFile, agent: string, place: { section: string; name: string }, predicate: TArgumentPredicate): TRawFile {
  const next = structuredClone(json);
  const entry = next.agents?.find((a) => a.name === agent) as Record<string, Record<string, Record<string, unknown>>>;
  const policy = entry[place.section]?.[place.name] as { predicates?: TArgumentPredicate[] };
  policy.predicates = [predicate, ...(policy.predicates ?? [])];
  return next;
}

const fileText = (json: unknown): string => `${JSON.stringify(json, null, 2)}\n`;

/** A file entry for an agent the installation serves without an agents file: its harness, model and its file tools with their policies. */
function fileEntryOf(agent: TAgentConfig): Record<string, unknown> {
  const tools = Object.fromEntries(
    agent.tools.filter((t) => Object.hasOwn(FILE_TOOLS, t.name)).map((t) => [t.name, { approval: agent.approval[t.name] ?? "never", predicates: agent.predicates?.[t.name] ?? [] }]),
  );
  return { name: agent.name, description: agent.description, harness: agent.harness, ...(agent.harness === "scripted" ? {} : { model: agent.model }), tools, ...(agent.grants ? { grants: agent.grants } : {}) };
}

const changeKeyOf = (parts: unknown[]): string => createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);

function summaryOf(kind: "loosen" | "tighten", e: { action: string; agent: string; requests: number; people: number }): string {
  return kind === "loosen"
    ? `${e.action} for agent ${e.agent}: ${e.requests} of ${e.requests} approved as asked by ${e.people} people, never edited, denied or left to expire → nobody is asked for exactly these arguments.`
    : `${e.action} for agent ${e.agent}: ${e.requests} of ${e.requests} denied by ${e.people} ${e.people === 1 ? "person" : "people"} → always a person, at high risk.`;
}

/** The suggestions of the last `days` days (operators, auditors and admins). */
export async function listSuggestions(deps: Pick<TDeps, "db" | "now" | "agents" | "agentsConfig" | "config">, actor: TActor, days: number): Promise<TSuggestion[]> {
  if (actor.role === "member") throw refused("forbidden", { code: "roleCannot", params: { act: "readConfig" } });
  return computeSuggestions(deps, days, fileNow(deps));
}

async function computeSuggestions(deps: Pick<TDeps, "db" | "now" | "agents" | "config">, days: number, file: TFileNow | null): Promise<TSuggestion[]> {
  const to = deps.now();
  const from = new Date(to.getTime() - days * DAY_MS);
  const minRequests = deps.config.suggestMinRequests;
  const candidates = await decisionEvidence(deps.db, { from, to, minCount: Math.min(minRequests, TIGHTEN_MIN_DENIALS) });
  const dismissed = await dismissedChanges(deps.db, days);
  const suggestions: TSuggestion[] = [];
  for (const e of candidates) {
    const agent = deps.agents.find(e.agent);
    const texts = exactTexts(e.arguments);
    if (!agent || !texts) continue;
    const kind = e.approved === e.total && e.total >= minRequests && e.approvers >= 2 ? "loosen" : e.denied === e.total && e.total >= TIGHTEN_MIN_DENIALS ? "tighten" : null;
    if (!kind) continue;
    // Every request the rule would match, not only the identical ones: one denial among them and no loosening.
    const matched = await matchedDecisions(deps.db, { agent: e.agent, action: e.action, from, to, equals: texts });
    if (kind === "loosen" && !(matched.approved === matched.total && matched.total >= minRequests && matched.approvers >= 2)) continue;
    if (kind === "tighten" && matched.denied !== matched.total) continue;
    // Already the rule now (the window predates a change): nothing to suggest.
    const gate = requestGate(agent, e);
    if (!gate) continue;
    if (kind === "loosen" && gate.policy === "never") continue;
    if (kind === "tighten" && gate.policy === "always" && gate.fixedRisk === "high") continue;
    const predicate: TArgumentPredicate = kind === "loosen" ? { match: exactMatch(texts), approval: "never" } : { match: exactMatch(texts), risk: "high", approval: "always" };
    const entry = file?.json.agents?.find((a) => a.name === e.agent) ?? null;
    const place = entry ? sectionOf(entry, e) : null;
    const changeKey = changeKeyOf([kind, e.agent, place?.section ?? null, place?.name ?? e.toolName, predicate]);
    if (dismissed.has(changeKey)) continue;
    const target = place ? `agents[${e.agent}].${place.section}.${place.name}.predicates` : null;
    let diff: string | null = null;
    let reason: string | undefined;
    let download: unknown;
    if (file && entry && place) {
      diff = createTwoFilesPatch(file.path, file.path, file.text, fileText(withPredicate(file.json, e.agent, place, predicate)), "now", "with this change");
    } else if (file) {
      reason = entry
        ? `The agent ${e.agent} has no entry for ${e.external ? e.action : e.toolName} in the agents file (its policy comes from a default or its * entry); add one, then this rule.`
        : `The agent ${e.agent} is a built-in agent, not one of the agents file's; add it to the file to change its policy.`;
    } else {
      reason = "This installation has no agents file (COUNTERSIGN_AGENTS_FILE): download the suggested file, review it and start the server with it.";
      const own = fileEntryOf(agent);
      const section = e.external ? null : { section: "tools", name: e.toolName };
      download = section && Object.hasOwn(own.tools as object, e.toolName) ? withPredicate({ builtins: true, agents: [own] }, e.agent, section, predicate) : undefined;
    }
    suggestions.push({
      id: `sug_${(file?.hash ?? NO_FILE_HASH).slice(0, 8)}_${changeKey}`,
      kind,
      agent: e.agent,
      action: e.action,
      toolName: e.toolName,
      external: e.external,
      arguments: e.arguments,
      predicate,
      target,
      evidence: {
        summary: summaryOf(kind, { action: e.action, agent: e.agent, requests: matched.total, people: kind === "loosen" ? matched.approvers : matched.deniers }),
        days,
        from: from.toISOString(),
        to: to.toISOString(),
        requests: matched.total,
        approved: matched.approved,
        denied: matched.denied,
        people: kind === "loosen" ? matched.approvers : matched.deniers,
        matched: matched.latest.map((m) => ({ ...m, createdAt: m.createdAt.toISOString() })),
      },
      diff,
      appliable: diff !== null,
      ...(reason ? { reason } : {}),
      ...(download !== undefined ? { file: download } : {}),
    });
  }
  if (file) suggestions.push(...(await promotions(deps, days, from, to, file, dismissed)));
  return suggestions;
}

/** The file with the agent's shadow policy made live: each shadow entry replaces the live one, and the shadow is removed. */
function withShadowLive(json: TRawFile, agent: string): TRawFile {
  const next = structuredClone(json);
  const entry = next.agents?.find((a) => a.name === agent) as Record<string, unknown> & { shadow?: { tools?: Record<string, { approval?: string; predicates?: unknown[] }>; actions?: Record<string, unknown>; predicates?: Record<string, unknown[]> } };
  const shadow = entry.shadow ?? {};
  const live = (section: "tools" | "nativeTools", name: string) => (entry[section] as Record<string, Record<string, unknown>> | undefined)?.[name];
  for (const [name, t] of Object.entries(shadow.tools ?? {})) {
    const target = live("tools", name) ?? live("nativeTools", name);
    if (!target) continue;
    if (t.approval !== undefined) target.approval = t.approval;
    if (t.predicates !== undefined) target.predicates = t.predicates;
  }
  for (const [name, predicates] of Object.entries(shadow.predicates ?? {})) {
    const target = live("tools", name) ?? live("nativeTools", name);
    if (target) target.predicates = predicates;
  }
  if (shadow.actions) entry.actions = { ...((entry.actions as Record<string, unknown> | undefined) ?? {}), ...shadow.actions };
  delete entry.shadow;
  return next;
}

/** Switching an agent's shadow policy to live, for each agent of the file that has one, with what the shadow would have done in the window. */
async function promotions(deps: Pick<TDeps, "db">, days: number, from: Date, to: Date, file: TFileNow, dismissed: ReadonlySet<string>): Promise<TSuggestion[]> {
  const out: TSuggestion[] = [];
  for (const entry of file.json.agents ?? []) {
    if (!entry.shadow || typeof entry.name !== "string") continue;
    const agent = entry.name;
    const changeKey = changeKeyOf(["promote", agent, entry.shadow]);
    if (dismissed.has(changeKey)) continue;
    const counts = await shadowCounts(deps.db, { from, to, scopeUserId: null, agent });
    const diff = createTwoFilesPatch(file.path, file.path, file.text, fileText(withShadowLive(file.json, agent)), "now", "with this change");
    out.push({
      id: `sug_${file.hash.slice(0, 8)}_${changeKey}`,
      kind: "promote",
      agent,
      action: "*",
      toolName: "*",
      external: false,
      arguments: null,
      predicate: null,
      shadow: counts,
      target: `agents[${agent}].shadow`,
      evidence: {
        summary: `The shadow policy of agent ${agent}: in ${days} days it would have decided ${counts.differed} requests differently: let ${counts.wouldAutoApprove} through without a person (${counts.wouldAutoApproveDenied} of them a person denied, ${counts.wouldAutoApproveEdited} edited) and asked a person for ${counts.wouldAsk}.`,
        days,
        from: from.toISOString(),
        to: to.toISOString(),
        requests: counts.differed,
        approved: 0,
        denied: counts.wouldAutoApproveDenied,
        people: 0,
        matched: [],
      },
      diff,
      appliable: true,
    });
  }
  return out;
}

const ID = /^sug_([0-9a-f]{8})_([0-9a-f]{16})$/;
const unknownSuggestion = (id: string) => new DomainError("not_found", `No suggestion ${id} in this window now (dismissed, no longer supported by the history, or never one).`);

/** The suggestion `id` names, now, or the reason it cannot be used (404 unknown, 409 the file changed). */
async function current(deps: Pick<TDeps, "db" | "now" | "agents" | "agentsConfig" | "config">, id: string, days: number): Promise<{ suggestion: TSuggestion; file: TFileNow | null }> {
  const parts = ID.exec(id);
  if (!parts) throw unknownSuggestion(id);
  const file = fileNow(deps);
  if ((file?.hash ?? NO_FILE_HASH).slice(0, 8) !== parts[1]) {
    throw new DomainError("conflict", "The agents file changed since this suggestion was made (or it was applied already); list the suggestions again.");
  }
  const suggestion = (await computeSuggestions(deps, days, file)).find((s) => s.id === id);
  if (!suggestion) throw unknownSuggestion(id);
  return { suggestion, file };
}

const assertAdmin = (actor: TActor) => {
  if (actor.role !== "admin") throw refused("forbidden", { code: "roleCannot", params: { act: "administer" } });
};

/** The file with a suggestion's change. */
function changedFile(json: TRawFile, suggestion: TSuggestion): TRawFile {
  if (suggestion.kind === "promote") return withShadowLive(json, suggestion.agent);
  const entry = json.agents?.find((a) => a.name === suggestion.agent);
  const place = entry ? sectionOf(entry, suggestion) : null;
  if (!place || !suggestion.predicate) throw new DomainError("conflict", "The agents file no longer has the place this change goes; list the suggestions again.");
  return withPredicate(json, suggestion.agent, place, suggestion.predicate);
}

/**
 * Applies a suggestion (admins): the agents file rewritten atomically (a temporary file renamed
 * over it) with the previous one kept beside it (`<file>.<timestamp>.bak`), the configuration
 * reloaded, and an admin-trail row. Checked first: the file is unchanged since the suggestion,
 * the suggestion is still one, and the new file is valid.
 */
export async function applySuggestion(deps: Pick<TDeps, "db" | "now" | "agents" | "agentsConfig" | "config">, who: TAdminWho & { actor: TActor }, id: string, days: number) {
  assertAdmin(who.actor);
  const { suggestion, file } = await current(deps, id, days);
  if (!file || !suggestion.appliable || !deps.agentsConfig) throw new DomainError("conflict", suggestion.reason ?? "This suggestion cannot be applied to the agents file.");
  const next = fileText(changedFile(file.json, suggestion));
  // Never a file the server would refuse: checked as a reload would read it.
  parseAgentsFile(JSON.parse(next), file.path, deps.config.environment);
  const stamp = deps.now().toISOString().replace(/[:.]/g, "-");
  const backup = `${file.path}.${stamp}.bak`;
  const temporary = `${file.path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    copyFileSync(file.path, backup);
    // The new file keeps the old one's permissions (another process may read it).
    writeFileSync(temporary, next, { mode: 0o600 });
    chmodSync(temporary, statSync(file.path).mode & 0o777);
    renameSync(temporary, file.path);
  } catch (error) {
    rmSync(temporary, { force: true });
    rmSync(backup, { force: true });
    const why = error instanceof Error ? error.message : String(error);
    throw new DomainError("conflict", `The agents file ${file.path} cannot be rewritten here (${why}); change it where it is kept, then reload. Nothing was changed.`);
  }
  const reload = await deps.agentsConfig.reload({ who, via: "trpc" });
  await deps.db.transaction(async (tx) =>
    recordAdminEvent(tx as unknown as Db, who, {
      action: "policy.suggestion_applied",
      targetType: "agent",
      targetId: suggestion.agent,
      detail: { suggestion: suggestion.id, kind: suggestion.kind, target: suggestion.target, predicate: suggestion.predicate, backup, requests: suggestion.evidence.requests },
    }),
  );
  return { applied: suggestion, backup, reload };
}

/** Dismisses a suggestion (admins): not proposed again from a window of this length. */
export async function dismissSuggestion(deps: Pick<TDeps, "db" | "now" | "agents" | "agentsConfig" | "config">, who: TAdminWho & { actor: TActor }, id: string, days: number) {
  assertAdmin(who.actor);
  const { suggestion } = await current(deps, id, days);
  const changeKey = ID.exec(id)?.[2] ?? "";
  await deps.db.transaction(async (tx) => {
    await dismissChange(tx as unknown as Db, { changeKey, windowDays: days, dismissedBy: who.actor.userId });
    await recordAdminEvent(tx as unknown as Db, who, {
      action: "policy.suggestion_dismissed",
      targetType: "agent",
      targetId: suggestion.agent,
      detail: { suggestion: suggestion.id, kind: suggestion.kind, target: suggestion.target, days },
    });
  });
  return { dismissed: suggestion.id };
}
