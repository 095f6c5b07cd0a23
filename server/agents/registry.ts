import { DEFAULT_SELF_APPROVAL, type TDecisionPolicy } from "../core/separation-of-duties";
import { DEFAULT_AGENT } from "./catalog";
import type { TAgentConfig } from "./types";

/**
 * The agents one server serves, assembled by the composition root (server/app.ts): the
 * configured ones plus any an embedder or a test registers. Names are unique.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, TAgentConfig>();

  constructor(agents: readonly TAgentConfig[], readonly defaultAgent: string = DEFAULT_AGENT) {
    for (const agent of agents) this.register(agent);
  }

  /** Adds an agent; returns the function that removes it again. */
  register(agent: TAgentConfig): () => void {
    if (this.agents.has(agent.name)) throw new Error(`An agent named ${agent.name} is already configured.`);
    this.agents.set(agent.name, agent);
    return () => {
      if (this.agents.get(agent.name) === agent) this.agents.delete(agent.name);
    };
  }

  /** Looks up an agent by name. */
  find(name: string): TAgentConfig | undefined {
    return this.agents.get(name);
  }

  /** Every agent, in registration order. */
  list(): TAgentConfig[] {
    return [...this.agents.values()];
  }

  /** The separation-of-duties policy of an agent by name (the defaults for one no longer configured). */
  decisionPolicyOf(name: string): TDecisionPolicy {
    return { agent: name, selfApproval: this.find(name)?.selfApproval ?? DEFAULT_SELF_APPROVAL };
  }
}
