import { readFileSync } from "node:fs";
import { z } from "zod";
import { ZSsoSection } from "../auth/sso-config";
import { SELF_APPROVAL_POLICIES } from "../core/separation-of-duties";
import { ACTION_NAME_RULE, ACTION_PATTERN } from "../core/actions";
import { RISKS } from "../core/vocabulary";
import { nodeInvokeTool } from "../devices/node-invoke-tool";
import { ZMcpServers } from "../mcp/config";
import { parseNotifyConfig, type TNotifyConfig, ZNotifyConfig } from "../notify/config";
import { collectCardDetailsTool, getPageContextTool } from "../tools/client-tools";
import { echoTool, execTool } from "../tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../tools/question-tools";
import type { TTool } from "../tools/types";
import { schemaProblem } from "./actions";
import { BUILTIN_AGENTS, configuredAgents, DEFAULT_AGENT } from "./catalog";
import { APPROVAL_POLICIES, type TAgentConfig, type TShadowPolicy } from "./types";

/**
 * The agents configuration file (`COUNTERSIGN_AGENTS_FILE`, JSON): agents, their tools and who
 * decides them, argument predicates, approvers, self-approval, quorum, grants, expiry times and
 * notification rules. This zod schema is the single source: docs/agents.schema.json is generated
 * from it (`npm run agents:schema`) and a test checks the committed file matches.
 */

/** The tools an agent of the file may declare, by name. */
export const FILE_TOOLS: Readonly<Record<string, TTool>> = Object.fromEntries(
  [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool, nodeInvokeTool].map((t) => [t.name, t]),
);

const ZMs = z.number().int().min(1000).max(30 * 24 * 3_600_000);
const ZEnvName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name");
const isRegex = (source: string): boolean => {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
};

const ZMatch = z
  .strictObject({
    /** The argument's name, e.g. `command` or `cwd` of `exec`, `text` of `echo`. */
    argument: z.string().min(1).max(64),
    /** A JavaScript regular expression the argument's text must match. */
    regex: z.string().min(1).max(1000).refine(isRegex, "must be a valid regular expression").optional(),
    /** A prefix the argument's text must start with (a path prefix matches whole segments). */
    prefix: z.string().min(1).max(1000).optional(),
  })
  .refine((m) => (m.regex === undefined) !== (m.prefix === undefined), { message: "give exactly one of regex and prefix" })
  .meta({ description: "A condition on one argument of the call." });

const ZPredicate = z
  .strictObject({
    /** Every condition must hold. */
    match: z.array(ZMatch).min(1),
    /** The call's risk when it matches (raises or lowers the tool's own estimate). */
    risk: z.enum(RISKS).optional(),
    /** `always`: a person must approve the call; `never`: nobody is asked; whatever the tool's `approval` says. The first matching predicate that sets an approval wins. */
    approval: z.enum(["always", "never"]).optional(),
  })
  .refine((p) => p.risk !== undefined || p.approval !== undefined, { message: "a predicate sets risk, approval or both" })
  .meta({ description: "An argument predicate: when it matches, it sets the risk and/or who decides." });

const ZApprovers = z
  .strictObject({
    roles: z.array(z.enum(["admin", "operator", "member"])).optional(),
    users: z.array(z.email()).optional(),
    /** Teams: the groups single sign-on gives people (docs/sso.md#teams). */
    groups: z.array(z.string().trim().min(1).max(256)).optional(),
  })
  .refine((a) => (a.roles?.length ?? 0) + (a.users?.length ?? 0) + (a.groups?.length ?? 0) > 0, { message: "name at least one role, user or group" });

const ZQuorum = z.strictObject({ high: z.number().int().min(1).max(20) });

const ZActionEntry = z
  .strictObject({
    /** Who decides: `always` a person (default), `review` the exec reviewer first, `never` nobody. */
    approval: z.enum(APPROVAL_POLICIES).default("always"),
    /** The approval's risk (default medium); a predicate's risk wins, a caller may only raise it. */
    risk: z.enum(RISKS).default("medium"),
    /** What the approver reads when the request brings no message; also given to the reviewer. */
    description: z.string().min(1).max(500).optional(),
    /** A JSON Schema (2020-12) the arguments must satisfy; a request that does not is 422 naming the field. */
    schema: z
      .record(z.string(), z.unknown())
      .superRefine((schema, ctx) => {
        const problem = schemaProblem(schema);
        if (problem) ctx.addIssue({ code: "custom", message: `not a JSON Schema (2020-12): ${problem}` });
      })
      .optional(),
    predicates: z.array(ZPredicate).default([]),
    /** Who may decide this action's approvals (instead of the agent's approvers). */
    approvers: ZApprovers.optional(),
    /** Distinct approvers a high-risk approval of this action needs (instead of the agent's quorum). */
    quorum: ZQuorum.optional(),
  })
  .meta({ description: "An action the caller runs itself and asks about first (POST /v1/approvals, MCP request_approval and approval_prompt)." });

const ZToolEntry = z.strictObject({
  /** Who decides before the tool runs: `always` a person, `review` the exec reviewer first, `never` nobody. */
  approval: z.enum(APPROVAL_POLICIES).default("never"),
  predicates: z.array(ZPredicate).default([]),
});

/**
 * A shadow policy (docs/analytics.md#shadow-rules): the live policy's keys, each replacing the live
 * entry in an evaluation that decides nothing: `tools` (who decides, predicates), `actions`, and
 * `predicates` per tool.
 */
const ZShadow = z.strictObject({
  tools: z.record(z.string(), z.strictObject({ approval: z.enum(APPROVAL_POLICIES).optional(), predicates: z.array(ZPredicate).optional() })).optional(),
  actions: z.record(z.string().regex(ACTION_PATTERN, `must be an action name (${ACTION_NAME_RULE}), * or a pattern with *`), ZActionEntry).optional(),
  predicates: z.record(z.string(), z.array(ZPredicate)).optional(),
});

const ZEndpoint = z.strictObject({
  baseURL: z.url({ protocol: /^https?$/ }),
  apiKeyEnv: ZEnvName.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: ZMs.optional(),
  firstTokenTimeoutMs: ZMs.optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  includeUsage: z.boolean().optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
});

const ZAgentEntry = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1–64 letters, digits, '_', '.' or '-'"),
    description: z.string().max(500).default(""),
    /** `scripted`, `openai-compatible`, or the id of a harness an enabled plugin registers (checked at boot, once plugins loaded). */
    harness: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be scripted, openai-compatible or the id of an enabled plugin's harness"),
    /** The model id sent to the endpoint (`scripted` for the scripted harness). */
    model: z.string().min(1).optional(),
    endpoint: ZEndpoint.optional(),
    system: z.string().optional(),
    fallbackModel: z.string().min(1).optional(),
    maxTurns: z.number().int().min(1).max(1000).default(64),
    /** Tool name → who decides and the argument predicates. Tools not listed are not given to the agent. */
    tools: z.record(z.string(), ZToolEntry),
    /** Tools a native-loop plugin harness runs itself (docs/plugins.md), with who decides before each call (action `native:<name>`). */
    nativeTools: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1–64 letters, digits, '_', '.' or '-'"), ZToolEntry).optional(),
    /** Who may decide this agent's approvals besides the role rule (unset: any operator or admin). */
    approvers: ZApprovers.optional(),
    /** A shadow policy evaluated beside the live one, deciding nothing: where it differs, the request records what it would have done. */
    shadow: ZShadow.optional(),
    selfApproval: z.enum(SELF_APPROVAL_POLICIES).optional(),
    quorum: ZQuorum.optional(),
    /** Actions callers run themselves, by name, `*` (the default for undeclared names) or a pattern such as `coding:*`. */
    actions: z.record(z.string().regex(ACTION_PATTERN, `must be an action name (${ACTION_NAME_RULE}), * or a pattern with *`), ZActionEntry).optional(),
    /** `any` (default): any action name may be asked about; `declared`: only the names `actions` lists. */
    externalActions: z.enum(["any", "declared"]).optional(),
    grants: z.strictObject({ session: z.boolean().optional(), maxDays: z.number().int().min(1).max(365).optional() }).optional(),
    reviewEdits: z.boolean().optional(),
    exec: z.strictObject({ network: z.boolean().optional(), env: z.array(ZEnvName).optional() }).optional(),
    requiredNodeCommands: z.array(z.string().min(1)).optional(),
    expiry: z
      .strictObject({
        /** How long an approval waits for a person. */
        approvalMs: ZMs.default(15 * 60_000),
        /** How long a client-tool request waits for the client. */
        clientToolMs: ZMs.default(5 * 60_000),
        /** Active execution time of one attempt. */
        executionMs: ZMs.optional(),
        /** How long finalization may take. */
        settlementMs: ZMs.optional(),
      })
      .default({ approvalMs: 15 * 60_000, clientToolMs: 5 * 60_000 }),
  })
  .superRefine((a, ctx) => {
    for (const name of Object.keys(a.tools)) {
      if (!Object.hasOwn(FILE_TOOLS, name)) ctx.addIssue({ code: "custom", path: ["tools", name], message: `unknown tool; expected one of ${Object.keys(FILE_TOOLS).join("|")}` });
    }
    if (a.harness === "openai-compatible" && !a.endpoint) ctx.addIssue({ code: "custom", path: ["endpoint"], message: "an openai-compatible agent needs an endpoint" });
    if (a.harness === "openai-compatible" && !a.model) ctx.addIssue({ code: "custom", path: ["model"], message: "an openai-compatible agent needs a model" });
    if (a.harness === "scripted" && a.endpoint) ctx.addIssue({ code: "custom", path: ["endpoint"], message: "a scripted agent has no endpoint" });
    if ((a.harness === "scripted" || a.harness === "openai-compatible") && a.nativeTools) ctx.addIssue({ code: "custom", path: ["nativeTools"], message: "a built-in harness runs no native tools" });
    for (const name of Object.keys(a.nativeTools ?? {})) {
      if (Object.hasOwn(a.tools, name)) ctx.addIssue({ code: "custom", path: ["nativeTools", name], message: "is also one of the agent's host tools" });
    }
    for (const section of ["tools", "predicates"] as const) {
      for (const name of Object.keys(a.shadow?.[section] ?? {})) {
        if (!Object.hasOwn(a.tools, name) && !Object.hasOwn(a.nativeTools ?? {}, name)) ctx.addIssue({ code: "custom", path: ["shadow", section, name], message: "is not one of the agent's tools" });
      }
    }
    // A host tool keeps its own meaning (its entry under tools): an action of the same name would never apply.
    const hostNames = new Set(Object.keys(a.tools).flatMap((name) => {
      const tool = FILE_TOOLS[name];
      return tool?.kind === "host" ? [tool.name, tool.action] : [];
    }));
    for (const name of Object.keys(a.actions ?? {})) {
      if (hostNames.has(name)) ctx.addIssue({ code: "custom", path: ["actions", name], message: "is one of the agent's host tools; its policy is its entry under tools" });
    }
    if (a.externalActions === "declared" && a.actions && Object.hasOwn(a.actions, "*")) {
      ctx.addIssue({ code: "custom", path: ["actions", "*"], message: 'has no effect with externalActions "declared" (undeclared names are refused); remove one of them' });
    }
  });

export const ZAgentsFile = z
  .strictObject({
    $schema: z.string().optional(),
    /** Keep the built-in demo agents (`scripted`, ...) beside the file's (default true); a file agent of the same name replaces one. */
    builtins: z.boolean().default(true),
    /** The agent used when a request names none (default: `scripted`, or the file's first agent without built-ins). */
    defaultAgent: z.string().min(1).optional(),
    agents: z.array(ZAgentEntry).min(1),
    /** Notification channels and rules: the schema of COUNTERSIGN_NOTIFY_CONFIG (docs/notify.example.json); read at boot. */
    notify: ZNotifyConfig.optional(),
    /** Single sign-on (docs/sso.md): the keys of the COUNTERSIGN_OIDC_* variables, which override them; read at boot. */
    sso: ZSsoSection.partial().optional(),
  })
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.agents.forEach((a, i) => {
      if (seen.has(a.name)) ctx.addIssue({ code: "custom", path: ["agents", i, "name"], message: `another agent is named "${a.name}"` });
      seen.add(a.name);
    });
    const names = new Set([...seen, ...(f.builtins ? [...BUILTIN_AGENTS.map((a) => a.name), "model"] : [])]);
    if (f.defaultAgent !== undefined && !names.has(f.defaultAgent)) ctx.addIssue({ code: "custom", path: ["defaultAgent"], message: `no agent is named "${f.defaultAgent}"` });
  });

export type TAgentsFile = z.infer<typeof ZAgentsFile>;
type TAgentEntry = TAgentsFile["agents"][number];

/** `agents[1].tools.exec.approval` from zod's path. */
export const jsonPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), "") || "(root)";

/** One line per problem: `<JSON path>: <what is wrong>`. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const values = (issue as { values?: unknown[] }).values;
    // A bad record key: its own rule's words, not zod's "Invalid key in record".
    const keyIssues = issue.code === "invalid_key" ? (issue as { issues?: Array<{ message: string }> }).issues : undefined;
    const message =
      issue.code === "invalid_value" && Array.isArray(values)
        ? `expected one of ${values.map(String).join("|")}`
        : keyIssues?.length
          ? keyIssues.map((i) => i.message).join("; ")
          : issue.message;
    return `${jsonPath(issue.path)}: ${message}`;
  });
}

/** A file agent as the host's agent type: the one policy engine runs it. */
function toAgentConfig(entry: TAgentEntry): TAgentConfig {
  const tools = Object.keys(entry.tools).map((name) => FILE_TOOLS[name] as TTool);
  // Native tools share the one policy map and predicates (a name is never both: checked above).
  const entries = [...Object.entries(entry.tools), ...Object.entries(entry.nativeTools ?? {})];
  const approval = Object.fromEntries(entries.map(([name, t]) => [name, t.approval]));
  const predicates = Object.fromEntries(entries.filter(([, t]) => t.predicates.length > 0).map(([name, t]) => [name, t.predicates]));
  const builtin = entry.harness === "scripted" || entry.harness === "openai-compatible";
  return {
    name: entry.name,
    harness: entry.harness,
    model: entry.model ?? (builtin ? "scripted" : entry.harness),
    ...(entry.nativeTools ? { nativeTools: Object.keys(entry.nativeTools) } : {}),
    endpoint: entry.endpoint,
    system: entry.system,
    description: entry.description,
    tools,
    approval,
    approvalTtlMs: entry.expiry.approvalMs,
    clientToolTtlMs: entry.expiry.clientToolMs,
    executionTimeoutMs: entry.expiry.executionMs,
    settlementTimeoutMs: entry.expiry.settlementMs,
    maxTurns: entry.maxTurns,
    fallbackModel: entry.fallbackModel ?? (entry.harness === "scripted" ? "scripted-fallback" : undefined),
    requiredNodeCommands: entry.requiredNodeCommands,
    grants: entry.grants,
    reviewEdits: entry.reviewEdits,
    exec: entry.exec,
    selfApproval: entry.selfApproval,
    quorum: entry.quorum,
    approvers: entry.approvers,
    ...(Object.keys(predicates).length > 0 ? { predicates } : {}),
    ...(entry.actions ? { actions: entry.actions } : {}),
    ...(entry.externalActions ? { externalActions: entry.externalActions } : {}),
    ...(entry.shadow ? { shadow: shadowOf(entry.shadow) } : {}),
  };
}

/** The shadow entry as the agent's shadow policy: who decides and predicates per tool, action entries. */
function shadowOf(shadow: NonNullable<TAgentEntry["shadow"]>): TShadowPolicy {
  const tools = Object.entries(shadow.tools ?? {});
  const approval = Object.fromEntries(tools.flatMap(([name, t]) => (t.approval ? [[name, t.approval]] : [])));
  const predicates = { ...Object.fromEntries(tools.flatMap(([name, t]) => (t.predicates ? [[name, t.predicates]] : []))), ...(shadow.predicates ?? {}) };
  return { approval, predicates, ...(shadow.actions ? { actions: shadow.actions } : {}) };
}

/** What a loaded file yields: the agents to serve, the default, the notification config, and the file as read (shown to admins). */
export type TLoadedAgents = { agents: TAgentConfig[]; defaultAgent: string; notify: TNotifyConfig | null; file: TAgentsFile; path: string };

/** Validates a parsed file; throws one error listing every bad field by JSON path. */
export function parseAgentsFile(raw: unknown, source: string, env: Record<string, string | undefined>): Omit<TLoadedAgents, "path"> {
  const parsed = ZAgentsFile.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid ${source}: ${describeIssues(parsed.error).join("; ")}`);
  const file = parsed.data;
  const own = file.agents.map(toAgentConfig);
  const ownNames = new Set(own.map((a) => a.name));
  const agents = [...(file.builtins ? configuredAgents(env).filter((a) => !ownNames.has(a.name)) : []), ...own];
  const defaultAgent = file.defaultAgent ?? (file.builtins ? DEFAULT_AGENT : (own[0]?.name ?? DEFAULT_AGENT));
  const notify = file.notify ? parseNotifyConfig(file.notify, env, `${source} (notify)`) : null;
  return { agents, defaultAgent, notify, file };
}

/** Reads and validates the file at `path` (JSON); `env` holds the variables it names (secrets, the built-in agents' settings). */
export function loadAgentsFile(path: string, env: Record<string, string | undefined>): TLoadedAgents {
  const source = `COUNTERSIGN_AGENTS_FILE (${path})`;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`Cannot read ${source}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { ...parseAgentsFile(raw, source, env), path };
}

/** The JSON Schema of the file, generated from the zod schema (docs/agents.schema.json). */
export const agentsFileJsonSchema = (): Record<string, unknown> => z.toJSONSchema(ZAgentsFile, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;

/** The JSON Schema of COUNTERSIGN_MCP_SERVERS (docs/mcp-servers.schema.json). */
export const mcpServersJsonSchema = (): Record<string, unknown> => z.toJSONSchema(ZMcpServers, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
