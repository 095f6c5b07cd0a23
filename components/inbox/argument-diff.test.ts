import { describe, expect, test } from "vitest";
import { argumentsDiff } from "./argument-diff";

describe("argumentsDiff", () => {
  test("equal arguments have no changes", () => {
    expect(argumentsDiff({ command: "ls", env: { A: "1" } }, { env: { A: "1" }, command: "ls" })).toEqual([]);
  });

  test("a changed, an added and a removed key, in the requested order then the added ones", () => {
    expect(argumentsDiff({ command: "ls", cwd: "sub" }, { command: "ls -la", timeoutMs: 5000 })).toEqual([
      { kind: "changed", path: "command", before: "ls", after: "ls -la" },
      { kind: "removed", path: "cwd", before: "sub" },
      { kind: "added", path: "timeoutMs", after: 5000 },
    ]);
  });

  test("nested objects are compared key by key; arrays as whole values", () => {
    expect(argumentsDiff({ env: { A: "1", B: "2" }, args: [1, 2] }, { env: { A: "1", B: "3" }, args: [1, 2, 3] })).toEqual([
      { kind: "changed", path: "env.B", before: "2", after: "3" },
      { kind: "changed", path: "args", before: [1, 2], after: [1, 2, 3] },
    ]);
  });

  test("a type change is a change of the whole value", () => {
    expect(argumentsDiff({ n: 1 }, { n: "1" })).toEqual([{ kind: "changed", path: "n", before: 1, after: "1" }]);
  });
});
