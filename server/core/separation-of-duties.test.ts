import { describe, expect, test } from "vitest";
import type { TActor } from "./actor";
import { decisionRefusal, requiredApprovalsFor, type TSelfApproval } from "./separation-of-duties";
import type { TRole } from "./vocabulary";

const actor = (role: TRole, userId = `${role}-1`): TActor => ({ userId, role, name: role });
const policy = (selfApproval: TSelfApproval) => ({ agent: "scripted", selfApproval });
const ownRun = (who: TActor, requiredApprovals = 1) => ({ userId: who.userId, requiredApprovals });
const othersRun = (requiredApprovals = 1) => ({ userId: "someone-else", requiredApprovals });

describe("decisionRefusal: one's own run", () => {
  // [role, selfApproval, may decide its own]
  test.each([
    ["member", "never", false],
    ["member", "operators", false],
    ["member", "always", true],
    ["operator", "never", false],
    ["operator", "operators", true],
    ["operator", "always", true],
    ["admin", "never", false],
    ["admin", "operators", true],
    ["admin", "always", true],
    ["auditor", "always", false],
  ] as const)("%s with selfApproval %s: may decide = %s", (role, selfApproval, allowed) => {
    const who = actor(role);
    const refusal = decisionRefusal(who, ownRun(who), policy(selfApproval));
    expect(refusal === null).toBe(allowed);
  });

  test("a refused requester is told why, naming the agent", () => {
    const who = actor("member");
    expect(decisionRefusal(who, ownRun(who), policy("operators"))).toBe('You started this run; the agent "scripted" requires another person to approve it.');
  });

  test("a quorum approval never counts its requester, even with selfApproval always", () => {
    for (const role of ["member", "operator", "admin"] as const) {
      const who = actor(role);
      expect(decisionRefusal(who, ownRun(who, 2), policy("always"))).toBe("You started this run; this approval needs 2 approvals from other people, and its requester never counts.");
    }
  });
});

describe("decisionRefusal: someone else's run", () => {
  test.each([
    ["operator", null],
    ["admin", null],
    ["member", "Your role cannot decide approvals of other people's runs."],
    ["auditor", "Your role cannot decide approvals."],
  ] as const)("%s → %s", (role, expected) => {
    for (const selfApproval of ["never", "operators", "always"] as const) {
      expect(decisionRefusal(actor(role), othersRun(), policy(selfApproval))).toBe(expected);
      expect(decisionRefusal(actor(role), othersRun(3), policy(selfApproval))).toBe(expected);
    }
  });
});

describe("requiredApprovalsFor", () => {
  test("only high risk takes the quorum", () => {
    expect(requiredApprovalsFor({ high: 2 }, "high")).toBe(2);
    expect(requiredApprovalsFor({ high: 2 }, "medium")).toBe(1);
    expect(requiredApprovalsFor({ high: 2 }, "low")).toBe(1);
    expect(requiredApprovalsFor(undefined, "high")).toBe(1);
  });
  test("a quorum below 2 means one approver; a fractional one rounds up", () => {
    expect(requiredApprovalsFor({ high: 0 }, "high")).toBe(1);
    expect(requiredApprovalsFor({ high: 1 }, "high")).toBe(1);
    expect(requiredApprovalsFor({ high: 2.5 }, "high")).toBe(3);
  });
});
