import type { TRisk } from "../core/vocabulary";
import { TEAM_AUDIENCE, type TNotifyFileConfig, type TNotifyRule } from "./config";

export type TSubjectKind = "approval" | "question";
export type TNotifyEvent = "requested" | "reminder" | "escalation";

/** What routing looks at: the kind, the run's agent (null for a question without a run), the risk (approvals only) and the times. */
export type TRoutedSubject = { kind: TSubjectKind; agent: string | null; risk: TRisk | null; createdAt: Date; expiresAt: Date };

/** One delivery: a channel-wide message (webhook, Slack; recipient = channel name) or one email to one person. */
export type TDelivery = { channel: string; channelType: "webhook" | "slack" | "email"; recipient: string };

type TRouting = Pick<TNotifyFileConfig, "channels" | "groups" | "rules">;

/** Every rule that applies to the subject; a rule with `risks` never matches a question (it has no risk). */
export function matchingRules(config: TRouting, subject: TRoutedSubject): TNotifyRule[] {
  return config.rules.filter((rule) => {
    if (rule.kinds && !rule.kinds.includes(subject.kind)) return false;
    if (rule.agents && (subject.agent === null || !rule.agents.includes(subject.agent))) return false;
    if (rule.risks && (subject.risk === null || !rule.risks.includes(subject.risk))) return false;
    return true;
  });
}

/** Each team a notification may name, with its members' email addresses. */
export type TTeams = ReadonlyMap<string, readonly string[]>;

/** The teams the rules name (`team:<name>` audiences), whose members the notifier looks up. */
export function teamsNamed(config: Pick<TNotifyFileConfig, "rules">): string[] {
  const audiences = config.rules.flatMap((r) => [...r.notify, ...(r.escalateTo ?? [])]);
  return [...new Set(audiences.filter((a) => a.startsWith(TEAM_AUDIENCE)).map((a) => a.slice(TEAM_AUDIENCE.length)))];
}

/** The addresses an audience stands for: a group's members, a team's, or one person named by address. */
function addressesOf(config: TRouting, teams: TTeams, audience: string): readonly string[] {
  if (audience.startsWith(TEAM_AUDIENCE)) return teams.get(audience.slice(TEAM_AUDIENCE.length)) ?? [];
  return config.groups[audience] ?? (audience.includes("@") ? [audience] : []);
}

/** The deliveries of some rules to some of their groups, teams or people, one per channel or per (email channel, address). */
export function deliveriesOf(config: TRouting, rules: readonly TNotifyRule[], groupsOf: (rule: TNotifyRule) => readonly string[], teams: TTeams): TDelivery[] {
  const out = new Map<string, TDelivery>();
  for (const rule of rules) {
    for (const name of rule.channels) {
      const channel = config.channels[name];
      if (!channel) continue;
      if (channel.type !== "email") {
        out.set(`${name}\u0000`, { channel: name, channelType: channel.type, recipient: name });
        continue;
      }
      for (const audience of groupsOf(rule)) {
        for (const email of addressesOf(config, teams, audience)) {
          const address = email.toLowerCase();
          out.set(`${name}\u0000${address}`, { channel: name, channelType: "email", recipient: address });
        }
      }
    }
  }
  return [...out.values()];
}

/**
 * The events due now that are not planned yet, each with its deliveries (possibly none: the plan
 * row is still written so the event is decided once). Requested: at once. Reminder: at the
 * earliest `expiresAt - remindBeforeMs` of the matching rules, to their `notify` groups (none when
 * that moment is not after creation). Escalation: at the earliest `createdAt + escalateAfterMs`,
 * to the `escalateTo` groups of the escalating rules.
 */
export function dueEvents(config: TRouting, subject: TRoutedSubject, now: Date, planned: ReadonlySet<TNotifyEvent>, teams: TTeams): Array<{ event: TNotifyEvent; deliveries: TDelivery[] }> {
  const rules = matchingRules(config, subject);
  const out: Array<{ event: TNotifyEvent; deliveries: TDelivery[] }> = [];
  const t = now.getTime();
  if (!planned.has("requested")) out.push({ event: "requested", deliveries: deliveriesOf(config, rules, (r) => r.notify, teams) });
  const reminding = rules.filter((r) => r.remindBeforeMs !== undefined);
  if (!planned.has("reminder") && reminding.length > 0) {
    const at = subject.expiresAt.getTime() - Math.max(...reminding.map((r) => r.remindBeforeMs ?? 0));
    if (at <= t) out.push({ event: "reminder", deliveries: at > subject.createdAt.getTime() ? deliveriesOf(config, reminding, (r) => r.notify, teams) : [] });
  }
  const escalating = rules.filter((r) => r.escalateAfterMs !== undefined);
  if (!planned.has("escalation") && escalating.length > 0) {
    const at = subject.createdAt.getTime() + Math.min(...escalating.map((r) => r.escalateAfterMs ?? 0));
    if (at <= t) out.push({ event: "escalation", deliveries: deliveriesOf(config, escalating, (r) => r.escalateTo ?? [], teams) });
  }
  return out;
}

/** Exponential backoff before attempt `attempt + 1`: `baseMs · 2^(attempt-1)`, ±50% with jitter, at most an hour. */
export function backoffMs(retry: { baseMs: number; jitter: boolean }, attempt: number, random: () => number = Math.random): number {
  const plain = Math.min(retry.baseMs * 2 ** Math.max(0, attempt - 1), 3_600_000);
  return Math.round(retry.jitter ? plain * (0.5 + random()) : plain);
}
