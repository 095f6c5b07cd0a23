import { expect, test } from "vitest";
import { agentPolicyOf, evaluatePredicateList, evaluatePredicates } from "./agent-policy";

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

test("the first matching risk wins; the first matching approval wins; all conditions must hold", () => {
  expect(evaluatePredicates(policy, "exec", { command: "rm -rf x", cwd: "/srv/docs" })).toEqual({ risk: "low", approval: "always" });
  expect(evaluatePredicates(policy, "exec", { command: "git push", cwd: "/srv/app" })).toEqual({ approval: "always" });
  expect(evaluatePredicates(policy, "exec", { command: "git push", cwd: "/home/x" })).toEqual({});
  expect(evaluatePredicates(policy, "exec", { command: "echo" })).toEqual({});
  expect(evaluatePredicates(policy, "echo", { command: "rm x" })).toEqual({});
  // `never` lets a call through without a person: the first predicate that sets an approval decides.
  const ordered = [
    { match: [{ argument: "command", regex: "^git status$" }], approval: "never" as const },
    { match: [{ argument: "command", regex: "^git " }], approval: "always" as const, risk: "high" as const },
  ];
  // Risk and approval are each taken from the first matching predicate that sets it.
  expect(evaluatePredicateList(ordered, { command: "git status" })).toEqual({ approval: "never", risk: "high" });
  expect(evaluatePredicateList(ordered, { command: "git status --short" })).toEqual({ approval: "always", risk: "high" });
  expect(evaluatePredicateList(ordered, { command: "ls" })).toEqual({});
});

test("a run's policy snapshot is plain JSON of the policy fields only", () => {
  const snapshot = agentPolicyOf({ approval: { exec: "always" }, quorum: { high: 2 }, ...({ tools: [() => 1], name: "x" } as object) } as never);
  expect(snapshot).toEqual({ approval: { exec: "always" }, quorum: { high: 2 } });
});
