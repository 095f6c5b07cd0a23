import { expect, test } from "vitest";
import { agentPolicyOf, evaluatePredicates } from "./agent-policy";

const policy = {
  predicates: {
    exec: [
      { match: [{ argument: "cwd", prefix: "/srv/docs" }], risk: "low" as const },
      { match: [{ argument: "command", regex: "\\brm\\b" }], risk: "high" as const, approval: "always" as const },
      { match: [{ argument: "command", regex: "^git " }, { argument: "cwd", prefix: "/srv/" }], approval: "always" as const },
    ],
  },
};

test("a path prefix matches whole segments only", () => {
  expect(evaluatePredicates(policy, "exec", { command: "ls", cwd: "/srv/docs" }).risk).toBe("low");
  expect(evaluatePredicates(policy, "exec", { command: "ls", cwd: "/srv/docs/a/b" }).risk).toBe("low");
  expect(evaluatePredicates(policy, "exec", { command: "ls", cwd: "/srv/docsx" }).risk).toBeUndefined();
  expect(evaluatePredicates(policy, "exec", { command: "ls", cwd: "/srv" }).risk).toBeUndefined();
});

test("the first matching risk wins; any matching predicate can force approval; all conditions must hold", () => {
  expect(evaluatePredicates(policy, "exec", { command: "rm -rf x", cwd: "/srv/docs" })).toEqual({ risk: "low", forceApproval: true });
  expect(evaluatePredicates(policy, "exec", { command: "git push", cwd: "/srv/app" })).toEqual({ risk: undefined, forceApproval: true });
  expect(evaluatePredicates(policy, "exec", { command: "git push", cwd: "/home/x" })).toEqual({ risk: undefined, forceApproval: false });
  expect(evaluatePredicates(policy, "exec", { command: "echo" })).toEqual({ risk: undefined, forceApproval: false });
  expect(evaluatePredicates(policy, "echo", { command: "rm x" })).toEqual({ risk: undefined, forceApproval: false });
});

test("a run's policy snapshot is plain JSON of the policy fields only", () => {
  const snapshot = agentPolicyOf({ approval: { exec: "always" }, quorum: { high: 2 }, ...({ tools: [() => 1], name: "x" } as object) } as never);
  expect(snapshot).toEqual({ approval: { exec: "always" }, quorum: { high: 2 } });
});
