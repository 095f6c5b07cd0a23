import { describe, expect, test } from "vitest";
import { bindingHash, canonicalJson } from "./binding";

const base = {
  userId: "u1",
  sessionId: "s1",
  responseId: "r1",
  callId: "call_0_0",
  action: "tool:exec",
  arguments: { command: "ls", cwd: "build" },
  cwd: "/w/build",
};

describe("canonicalJson", () => {
  test("orders keys so equal objects serialize equally", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });
  test("drops undefined members like JSON does", () => {
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
  });
});

describe("bindingHash", () => {
  test("is stable across key order", () => {
    expect(bindingHash(base)).toBe(bindingHash({ ...base, arguments: { cwd: "build", command: "ls" } }));
  });
  test.each([
    ["userId", { userId: "u2" }],
    ["sessionId", { sessionId: "s2" }],
    ["responseId", { responseId: "r2" }],
    ["callId", { callId: "call_0_1" }],
    ["action", { action: "tool:echo" }],
    ["arguments", { arguments: { command: "ls -la", cwd: "build" } }],
    ["cwd", { cwd: "/w" }],
  ])("changes when %s changes", (_name, change) => {
    expect(bindingHash({ ...base, ...change })).not.toBe(bindingHash(base));
  });
});
