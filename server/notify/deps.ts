import type { TObserve } from "../observe/port";
import type { TDecisionPolicies } from "../ports/decision-policies";
import type { TBaseDeps } from "../ports/deps";

/** What the notifier uses of the process's dependencies (the host's whole `TDeps` is one). */
export type TNotifyDeps = Pick<TBaseDeps, "db" | "bus" | "log" | "now"> & { observe: TObserve; agents: TDecisionPolicies };
