import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, invoke, ok200 } from "./helpers";
import { eventsOf, modelTurns, runtimeScript, type TRuntimeTurn } from "./runtime-helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

async function outcomes(responseId: string): Promise<Array<{ turn: number; classification: string; fallback: string | null }>> {
  return (await eventsOf(app, responseId, "response.outcome")).map((e) => e.data as never);
}

describe(`terminal outcome classes (${testDbKind()})`, () => {
  const cases: Array<[string, TRuntimeTurn, string | null]> = [
    ["an empty final turn", {}, "empty"],
    ["whitespace only", { text: "  \n " }, "empty"],
    ["reasoning only", { reasoning: "thinking hard" }, "reasoning-only"],
    ["a plan only", { planText: "1. do it" }, "planning-only"],
    ["a plan and reasoning (plan wins)", { planText: "1. do it", reasoning: "because" }, "planning-only"],
    ["the silent reply NO_REPLY", { text: "NO_REPLY" }, null],
    ["visible text", { text: "hi" }, null],
    ["visible text with reasoning", { text: "hi", reasoning: "r" }, null],
  ];
  for (const [name, turn, expected] of cases) {
    it(`${name} → ${expected ?? "no classification"}`, async () => {
      const env = await invoke(app, operator.apiKey, runtimeScript([turn]));
      expect(env.status).toBe("completed");
      const got = await outcomes(env.id);
      if (expected === null) {
        expect(got).toEqual([]);
      } else {
        expect(got).toEqual([{ turn: 0, classification: expected, fallback: "scripted-fallback" }]);
      }
      // Without fallback turns the fallback model has nothing to add: no second model turn.
      expect((await modelTurns(app, env.id)).map((t) => t.model)).toEqual(["primary"]);
      if (turn.text?.trim()) expect(env.outputText).toBe(turn.text);
    });
  }

  it("the fallback model is tried once when the final turn is empty", async () => {
    const env = await invoke(app, operator.apiKey, runtimeScript([{ reasoning: "hmm" }], { fallback: [{ text: "from fallback" }] }));
    expect(env.status).toBe("completed");
    expect(env.outputText).toContain("from fallback");
    expect(await outcomes(env.id)).toEqual([{ turn: 0, classification: "reasoning-only", fallback: "scripted-fallback" }]);
    expect((await modelTurns(app, env.id)).map((t) => [t.turn, t.model])).toEqual([
      [0, "primary"],
      [1, "fallback"],
    ]);
  });

  it("a fallback that also yields nothing is not retried again", async () => {
    const env = await invoke(app, operator.apiKey, runtimeScript([{}], { fallback: [{}, { text: "never reached" }] }));
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("");
    expect(await outcomes(env.id)).toEqual([{ turn: 0, classification: "empty", fallback: "scripted-fallback" }]);
    expect((await modelTurns(app, env.id)).map((t) => t.model)).toEqual(["primary", "fallback"]);
  });

  it("visible text from the primary never calls the fallback", async () => {
    const env = await invoke(app, operator.apiKey, runtimeScript([{ text: "fine" }], { fallback: [{ text: "should not appear" }] }));
    expect(env.outputText).toBe("fine");
    expect((await modelTurns(app, env.id)).map((t) => t.model)).toEqual(["primary"]);
  });

  it("the fallback may use tools; after an approval the resumed attempt continues on the fallback model", async () => {
    const env = await invoke(app, operator.apiKey, runtimeScript([{ planText: "I will run it" }], { fallback: [execTurn("echo fb"), { text: "fallback finished" }] }));
    expect(env.status).toBe("requires_action");
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toContain("fallback finished");
    expect((await modelTurns(app, env.id)).map((t) => [t.turn, t.model])).toEqual([
      [0, "primary"],
      [1, "fallback"],
      [2, "fallback"],
    ]);
    expect(await outcomes(env.id)).toEqual([{ turn: 0, classification: "planning-only", fallback: "scripted-fallback" }]);
  });

  it("a plan turn is recorded as model.plan; intermediate turns with tools are never classified", async () => {
    const env = await invoke(app, operator.apiKey, runtimeScript([{ planText: "step one", toolCalls: [{ name: "echo", arguments: { text: "a" } }] }, { text: "done" }]));
    expect(env.outputText).toBe("done");
    expect(await outcomes(env.id)).toEqual([]);
    expect((await eventsOf(app, env.id, "model.plan")).map((e) => e.data)).toEqual([{ planText: "step one" }]);
  });
});
