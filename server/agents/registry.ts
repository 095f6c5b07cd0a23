import type { TAgentPolicy } from "../core/agent-policy";
import { DEFAULT_SELF_APPROVAL, type TDecisionPolicy } from "../core/separation-of-duties";
import { DEFAULT_AGENT } from "./catalog";
import type { TAgentConfig } from "./types";

/**
 * The agents one server serves, assembled by the composition root (server/app.ts): the
 * configured ones plus any an embedder or a test registers. Names are unique. The agents of a
 * configuration file (COUNTERSIGN_AGENTS_FILE) are swapped whole by `replaceConfigured` on a
 * reload; a run keeps the policy it started with (`forRun`).
 */
export class AgentRegistry {
  private readonly agents = new Map<string, TAgentConfig>();
  /** The names the configuration (built-in or file) declared, as opposed to ones registered later. */
  private configured = new Set<string>();

  constructor(agents: readonly TAgentConfig[], public defaultAgent: string = DEFAULT_AGENT) {
    for (const agent of agents) this.register(agent);
    this.configured = new Set(agents.map((a) => a.name));
  }

  /** Adds an agent; returns the function that removes it again. */
  register(agent: TAgentConfig): () => void {
    if (this.agents.has(agent.name)) throw new Error(`An agent named ${agent.name} is already configured.`);
    this.agents.set(agent.name, agent);
    return () => {
      if (this.agents.get(agent.name) === agent) this.agents.delete(agent.name);
    };
  }

  /**
   * Swaps the configured agents for `agents` in one step (a reload): agents registered by an
   * embedder or a test stay. Throws, changing nothing, when a new name collides with one of them.
   */
  replaceConfigured(agents: readonly TAgentConfig[], defaultAgent: string): void {
    for (const agent of agents) {
      if (this.agents.has(agent.name) && !this.configured.has(agent.name)) throw new Error(`An agent named ${agent.name} is already registered.`);
    }
    for (const name of this.configured) this.agents.delete(name);
    for (const agent of agents) this.agents.set(agent.name, agent);
    this.configured = new Set(agents.map((a) => a.name));
    this.defaultAgent = defaultAgent;
  }

  /** Looks up an agent by name. */
  find(name: string): TAgentConfig | undefined {
    return this.agents.get(name);
  }

  /**
   * The agent a run works with: today's definition (tools, harness, model) with the policy the run
   * copied when it started (approval, predicates, approvers, self-approval, quorum, grants, exec), so
   * a reload applies to the next run only. Runs stored before runs kept a policy get today's.
   */
  forRun(name: string, policy: TAgentPolicy | null | undefined): TAgentConfig | undefined {
    const agent = this.agents.get(name);
    if (!agent || !policy) return agent;
    // Fields the stored policy does not have were unset when the run started.
    return { ...agent, predicates: undefined, selfApproval: undefined, quorum: undefined, approvers: undefined, grants: undefined, reviewEdits: undefined, exec: undefined, ...policy };
  }

  /** Every agent, in registration order. */
  list(): TAgentConfig[] {
    return [...this.agents.values()];
  }

  /** The separation-of-duties policy of an agent by name (the defaults for one no longer configured), or of a run's stored policy. */
  decisionPolicyOf(name: string, policy?: TAgentPolicy | null): TDecisionPolicy {
    const agent = this.forRun(name, policy);
    return { agent: name, selfApproval: (policy ? policy.selfApproval : agent?.selfApproval) ?? DEFAULT_SELF_APPROVAL, approvers: policy ? policy.approvers : agent?.approvers };
  }
}
