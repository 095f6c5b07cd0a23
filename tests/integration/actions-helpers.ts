import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * An agents file (COUNTERSIGN_AGENTS_FILE) beside the built-in agents, declaring actions callers
 * run themselves: `ops` (a schema, a predicate that lets small refunds through, per-action
 * approvers and quorum, a reviewed action, a `*` default), `strict` (declared actions only) and
 * `coder` (coding-agent tools: `git status` needs nobody, reads need nobody, the rest a person).
 */
export const ACTIONS_AGENTS = {
  builtins: true,
  agents: [
    {
      name: "ops",
      harness: "scripted",
      tools: { exec: { approval: "always" } },
      actions: {
        send_email: {
          description: "Send an email to a customer",
          schema: {
            type: "object",
            properties: { to: { type: "string", format: "email" }, subject: { type: "string", minLength: 1 }, body: { type: "string" } },
            required: ["to", "subject"],
            additionalProperties: false,
          },
        },
        "payments.refund": {
          risk: "high",
          approvers: { roles: ["admin"] },
          quorum: { high: 2 },
          predicates: [{ match: [{ argument: "amount", regex: "^[0-9]{1,2}$" }], approval: "never", risk: "low" }],
        },
        "deploy:prod": { approval: "review", description: "Deploy the main branch to production" },
        "*": { risk: "low" },
      },
    },
    { name: "strict", harness: "scripted", tools: {}, externalActions: "declared", actions: { send_email: { risk: "medium" } } },
    {
      name: "coder",
      harness: "scripted",
      tools: {},
      actions: {
        "coding:Bash": { predicates: [{ match: [{ argument: "command", regex: "^git status$" }], approval: "never" }] },
        "coding:Read": { approval: "never", risk: "low" },
      },
    },
  ],
};

/** Writes {@link ACTIONS_AGENTS} to a fresh temporary file and returns its path. */
export function actionsAgentsFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "countersign-actions-")), "agents.json");
  writeFileSync(path, JSON.stringify(ACTIONS_AGENTS, null, 2));
  return path;
}
