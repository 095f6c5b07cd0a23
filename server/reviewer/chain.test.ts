import { describe, expect, it } from "vitest";
import { createReviewerChain, reviewWithFallback } from "./chain";
import { createConfiguredReviewer, reviewerConfigFromEnv } from "./config";
import { createRuleReviewer } from "./rule-reviewer";
import type { TExecReviewer, TReviewRequest, TReviewVerdict } from "./types";
import { DENY_GUIDANCE } from "./verdicts";

const request = (command: string): TReviewRequest => ({ command, cwd: "/w", agent: "scripted", toolName: "exec", arguments: { command } });

/** A reviewer that always answers `verdict` and counts its calls. */
function fixed(name: string, verdict: Partial<TReviewVerdict> | (() => never)) {
  const stub = {
    calls: 0,
    name,
    review: async () => {
      stub.calls++;
      if (typeof verdict === "function") verdict();
      return { reviewer: name, latencyMs: 1, rationale: `${name} says so`, ...verdict } as TReviewVerdict;
    },
  };
  return stub satisfies TExecReviewer;
}

describe("createReviewerChain", () => {
  it("makes a rule deny final without asking the model", async () => {
    const model = fixed("model", { decision: "allow-once", risk: "low" });
    const verdict = await createReviewerChain([createRuleReviewer(), model]).review(request("rm -rf /"));
    expect(verdict).toMatchObject({ decision: "deny", risk: "high", reviewer: "rules", guidance: DENY_GUIDANCE });
    expect(model.calls).toBe(0);
  });

  it("trusts a rule allow by default, and hands it to the model when told not to", async () => {
    const model = fixed("model", { decision: "ask", risk: "medium" });
    await expect(createReviewerChain([createRuleReviewer(), model]).review(request("ls"))).resolves.toMatchObject({
      decision: "allow-once",
      reviewer: "rules",
    });
    expect(model.calls).toBe(0);
    const strict = createReviewerChain([createRuleReviewer(), model], { trustRuleAllows: false });
    await expect(strict.review(request("ls"))).resolves.toMatchObject({ decision: "ask", risk: "medium", reviewer: "model" });
    expect(model.calls).toBe(1);
  });

  it("lets the model decide what the rules ask about", async () => {
    const model = fixed("model", { decision: "allow-once", risk: "medium" });
    const chain = createReviewerChain([createRuleReviewer(), model]);
    expect(chain.name).toBe("rules+model");
    const verdict = await chain.review(request("npm test"));
    expect(verdict).toMatchObject({ decision: "allow-once", risk: "medium", reviewer: "model" });
    expect(verdict.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("asks when the rules ask and there is no model", async () => {
    await expect(createReviewerChain([createRuleReviewer()]).review(request("npm test"))).resolves.toMatchObject({ decision: "ask", reviewer: "rules" });
    await expect(createReviewerChain([]).review(request("ls"))).resolves.toMatchObject({ decision: "ask", rationale: "No reviewer is configured." });
  });

  it("stops with ask when a stage throws or returns a malformed verdict", async () => {
    const model = fixed("model", { decision: "allow-once", risk: "low" });
    const broken = fixed("broken", () => {
      throw new Error("regex exploded");
    });
    const thrown = await createReviewerChain([broken, model]).review(request("ls"));
    expect(thrown).toMatchObject({ decision: "ask", risk: null, reviewer: "broken", rationale: "The reviewer failed: regex exploded" });
    const sloppy = fixed("sloppy", { decision: "allow-once", risk: "high" as "low" });
    await expect(createReviewerChain([sloppy, model]).review(request("ls"))).resolves.toMatchObject({ decision: "ask", risk: "high", reviewer: "sloppy" });
    expect(model.calls).toBe(0);
  });
});

describe("reviewWithFallback", () => {
  it("asks when no reviewer is configured", async () => {
    await expect(reviewWithFallback(null, request("ls"))).resolves.toEqual({
      decision: "ask",
      risk: null,
      rationale: "No reviewer is configured.",
      reviewer: "none",
      latencyMs: 0,
    });
  });

  it("turns a thrown error or a rejected promise into ask, never into permission", async () => {
    const thrower: TExecReviewer = {
      name: "thrower",
      review: () => {
        throw new Error("boom");
      },
    };
    const rejecter: TExecReviewer = { name: "rejecter", review: () => Promise.reject("nope") };
    await expect(reviewWithFallback(thrower, request("ls"))).resolves.toMatchObject({ decision: "ask", rationale: "The reviewer failed: boom" });
    await expect(reviewWithFallback(rejecter, request("ls"))).resolves.toMatchObject({ decision: "ask", rationale: "The reviewer failed: nope" });
  });

  it("passes valid verdicts through and replaces invalid ones with ask", async () => {
    await expect(reviewWithFallback(createRuleReviewer(), request("ls"))).resolves.toMatchObject({ decision: "allow-once", risk: "low" });
    const garbage: TExecReviewer = { name: "garbage", review: async () => ({ decision: "yes" }) as unknown as TReviewVerdict };
    await expect(reviewWithFallback(garbage, request("ls"))).resolves.toMatchObject({
      decision: "ask",
      reviewer: "garbage",
      rationale: "The reviewer returned an invalid verdict.",
    });
  });
});

describe("reviewer configuration", () => {
  it("is off without a base URL and rules+model with one", () => {
    expect(reviewerConfigFromEnv({})).toEqual({ mode: "off" });
    expect(createConfiguredReviewer(reviewerConfigFromEnv({}))).toBeNull();
    const config = reviewerConfigFromEnv({
      COUNTERSIGN_REVIEWER_BASE_URL: "http://127.0.0.1:11434/v1",
      COUNTERSIGN_REVIEWER_MODEL: "qwen3:8b",
      COUNTERSIGN_REVIEWER_TIMEOUT_MS: "5000",
    });
    expect(config).toMatchObject({ mode: "rules+model", model: { model: "qwen3:8b", timeoutMs: 5000 } });
    expect(createConfiguredReviewer(config)?.name).toBe("rules+model:qwen3:8b");
    expect(createConfiguredReviewer(reviewerConfigFromEnv({ COUNTERSIGN_REVIEWER: "rules" }))?.name).toBe("rules");
  });

  it("rejects a model mode without a model", () => {
    expect(() => reviewerConfigFromEnv({ COUNTERSIGN_REVIEWER: "model" })).toThrow();
    expect(() => reviewerConfigFromEnv({ COUNTERSIGN_REVIEWER: "sometimes" })).toThrow();
  });
});
