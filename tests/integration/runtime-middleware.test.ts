import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { MiddlewareRegistrationError, type TToolResultMiddleware, type TToolResultMiddlewareEvent } from "../../server/core/runtime";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, invoke, ok200 } from "./helpers";
import { eventsOf, replayFrames, runtimeScript, stepResult } from "./runtime-helpers";

let app: TTestApp;
let operator: TTestUser;
const unregister: Array<() => void> = [];

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterEach(() => {
  for (const off of unregister.splice(0)) off();
  expect(app.deps.host.middleware.registrations()).toEqual([]);
});
afterAll(async () => {
  await app?.close();
});

const plugin = (id: string, declared: string[] = ["countersign"]) => ({ id, manifest: { contracts: { agentToolResultMiddleware: declared } } });

function register(id: string, handler: TToolResultMiddleware, options?: { runtimes?: string[]; matcher?: string[] }, declared?: string[]) {
  unregister.push(app.deps.host.middleware.register(plugin(id, declared), handler, options));
}

type TToolResultItem = { type: "tool_result"; callId: string; name: string; output: Record<string, unknown> };
const toolResults = (output: unknown[]) => output.filter((o) => (o as { type: string }).type === "tool_result") as TToolResultItem[];

describe(`tool-result middleware registration errors (${testDbKind()})`, () => {
  it("an empty runtime list, an undeclared or unsupported runtime, a bad matcher or a missing manifest contract throw", () => {
    const noop: TToolResultMiddleware = () => undefined;
    const registry = app.deps.host.middleware;
    expect(() => registry.register(plugin("p1"), noop, { runtimes: [] })).toThrow(MiddlewareRegistrationError);
    expect(() => registry.register(plugin("p1"), noop, { runtimes: [] })).toThrow(/empty runtime list/);
    expect(() => registry.register(plugin("p2", ["countersign"]), noop, { runtimes: ["codex"] })).toThrow(/does not declare/);
    expect(() => registry.register(plugin("p3", ["countersign"]), noop, { runtimes: ["nonesuch"] })).toThrow(/unsupported runtime/);
    expect(() => registry.register(plugin("p4"), noop, { matcher: ["Echo"] })).toThrow(/not a canonical tool id.*"echo"/);
    expect(() => registry.register(plugin("p4"), noop, { matcher: [""] })).toThrow(MiddlewareRegistrationError);
    expect(() => registry.register(plugin("p4"), noop, { matcher: [] })).toThrow(/empty matcher/);
    expect(() => registry.register(plugin("p5", ["nonesuch"]), noop)).toThrow(/declares no supported runtime/);
    expect(() => registry.register({ id: "p6", manifest: { contracts: {} } } as never, noop)).toThrow(/does not declare contracts.agentToolResultMiddleware/);
    expect(() => registry.register(plugin(""), noop)).toThrow(/plugin id/);
    expect(() => registry.register(plugin("p7"), "not a function" as never)).toThrow(TypeError);
    try {
      registry.register(plugin("p1"), noop, { runtimes: [] });
    } catch (error) {
      expect((error as MiddlewareRegistrationError).runtimeCode).toBe("invalid_middleware_registration");
    }
    // Nothing half-registered.
    expect(registry.registrations()).toEqual([]);
  });

  it("a valid registration keeps its (runtimes, matcher) pair and unregisters cleanly", () => {
    register("pair", () => undefined, { runtimes: ["countersign"], matcher: ["echo"] }, ["countersign", "codex"]);
    register("pair", () => undefined, { runtimes: ["codex"] }, ["countersign", "codex"]);
    expect(app.deps.host.middleware.registrations().map((r) => [r.pluginId, r.runtimes, r.matcher])).toEqual([
      ["pair", ["countersign"], ["echo"]],
      ["pair", ["codex"], null],
    ]);
  });
});

describe(`tool-result middleware in a run (${testDbKind()})`, () => {
  it("rewrites echo results before the model sees them and leaves exec results alone", async () => {
    const seen: TToolResultMiddlewareEvent[] = [];
    register(
      "shout",
      (event) => {
        seen.push(event);
        return { result: { text: String((event.result as { text: string }).text).toUpperCase(), rewritten: true } };
      },
      { runtimes: ["countersign"], matcher: ["echo"] },
    );
    const env = await invoke(
      app,
      operator.apiKey,
      runtimeScript([{ toolCalls: [{ name: "echo", arguments: { text: "quiet" } }] }, execTurn("printf plain"), { text: "done" }]),
    );
    expect(env.status).toBe("requires_action");
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    const [echoResult, execResult] = toolResults(done.output);
    expect(echoResult).toMatchObject({ name: "echo", output: { text: "QUIET", rewritten: true } });
    expect(execResult).toMatchObject({ name: "exec", output: { exitCode: 0, stdout: "plain" } });
    expect(execResult?.output).not.toHaveProperty("rewritten");
    // Only the echo call reached the middleware, with its original result.
    expect(seen.map((e) => [e.toolName, e.runtimeId, e.isError, e.original.result])).toEqual([["echo", "countersign", false, { text: "quiet" }]]);
    // What the model was fed back is what the step log stores.
    expect(await stepResult(app, env.id, "tool:call_0_0")).toEqual({ text: "QUIET", rewritten: true });
    const frames = await replayFrames(app, operator.apiKey, env);
    expect(frames.filter((f) => f.type === "response.tool_result").map((f) => f.output)).toEqual([{ text: "QUIET", rewritten: true }, { exitCode: 0, stdout: "plain", stderr: "" }]);
    const applied = await eventsOf(app, env.id, "harness.tool_result.middleware");
    expect(applied.map((e) => e.data)).toEqual([{ sessionId: env.sessionId, callId: "call_0_0", appliedBy: ["shout"], skipped: 0 }]);
  });

  it("a rewrite of a failed exec keeps isError and the original failure visible", async () => {
    register("summarize", (event) => ({ result: { summary: `exit ${(event.result as { exitCode: number }).exitCode}` } }), { matcher: ["exec"] });
    const env = await invoke(app, operator.apiKey, runtimeScript([execTurn("echo boom >&2; exit 1"), { text: "saw failure" }]));
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    const [result] = toolResults(done.output);
    expect(result?.output).toEqual({
      summary: "exit 1",
      isError: true,
      originalError: { exitCode: 1, stdout: "", stderr: "boom\n" },
    });
  });

  it("a middleware cannot clear a failure by returning isError: false", async () => {
    register("whitewash", () => ({ result: { fine: true }, isError: false }), { matcher: ["exec"] });
    const env = await invoke(app, operator.apiKey, runtimeScript([execTurn("exit 3"), { text: "x" }]));
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(toolResults(done.output)[0]?.output).toMatchObject({ fine: true, isError: true, originalError: { exitCode: 3 } });
  });

  it("a throwing middleware is skipped and the result survives; later middleware still runs", async () => {
    register("broken", () => {
      throw new Error("middleware bug");
    });
    register("rejecting", async () => {
      throw new Error("async middleware bug");
    });
    register("garbage", () => "not a patch" as never);
    register("tagger", (event) => ({ result: { ...(event.result as object), tagged: true } }), { matcher: ["echo"] });
    const env = await invoke(app, operator.apiKey, runtimeScript([{ toolCalls: [{ name: "echo", arguments: { text: "survives" } }] }, { text: "done" }]));
    expect(env.status).toBe("completed");
    expect(toolResults(env.output)[0]?.output).toEqual({ text: "survives", tagged: true });
    const applied = await eventsOf(app, env.id, "harness.tool_result.middleware");
    expect(applied.map((e) => e.data)).toEqual([{ sessionId: env.sessionId, callId: "call_0_0", appliedBy: ["tagger"], skipped: 3 }]);
    expect(app.logs()).not.toContain("middleware bug\\n    at");
  });

  it("a throwing middleware on a failed exec leaves the failure exactly as the tool returned it", async () => {
    register("broken", () => {
      throw new Error("middleware bug");
    }, { matcher: ["exec"] });
    const env = await invoke(app, operator.apiKey, runtimeScript([execTurn("echo boom >&2; exit 1"), { text: "saw failure" }]));
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(toolResults(done.output)[0]?.output).toEqual({ exitCode: 1, stdout: "", stderr: "boom\n" });
    expect((await eventsOf(app, env.id, "harness.tool_result.middleware")).map((e) => e.data)).toEqual([
      { sessionId: env.sessionId, callId: "call_0_0", appliedBy: [], skipped: 1 },
    ]);
  });

  it("middleware registered for another runtime never runs in Countersign's runtime", async () => {
    let called = 0;
    register(
      "codex-only",
      () => {
        called++;
        return { result: "replaced" };
      },
      { runtimes: ["codex"] },
      ["codex", "countersign"],
    );
    const env = await invoke(app, operator.apiKey, runtimeScript([{ toolCalls: [{ name: "echo", arguments: { text: "as is" } }] }, { text: "done" }]));
    expect(toolResults(env.output)[0]?.output).toEqual({ text: "as is" });
    expect(called).toBe(0);
    expect(await eventsOf(app, env.id, "harness.tool_result.middleware")).toEqual([]);
  });
});
