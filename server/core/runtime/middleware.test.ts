import { describe, expect, test, vi } from "vitest";
import { MiddlewareRegistrationError } from "./errors";
import { createToolResultMiddlewareRegistry, type TToolResultMiddleware } from "./middleware";

const RUNTIMES = ["agentsapi", "codex", "openclaw", "countersign"];
const plugin = (id: string, declared: string[]) => ({ id, manifest: { contracts: { agentToolResultMiddleware: declared } } });
const tag =
  (label: string): TToolResultMiddleware =>
  ({ result }) => ({ result: `${String(result)}|${label}` });
const call = (toolName = "exec", result: unknown = "out", isError = false) => ({ toolName, callId: "call_0_0", result, isError });

describe("tool-result middleware registration", () => {
  test("omitted runtimes use every supported runtime the manifest declares", () => {
    const registry = createToolResultMiddlewareRegistry({ supportedRuntimes: RUNTIMES });
    registry.register(plugin("redact", ["codex", "agentsapi", "legacy-runtime"]), tag("r"));
    expect(registry.registrations()[0]).toMatchObject({ pluginId: "redact", runtimes: ["codex", "agentsapi"], matcher: null });
  });

  test.each([
    ["an empty runtime list", ["codex"], { runtimes: [] }, /empty runtime list/],
    ["a runtime missing from the manifest", ["codex"], { runtimes: ["openclaw"] }, /does not declare/],
    ["an unsupported runtime", ["mystery"], { runtimes: ["mystery"] }, /unsupported runtime "mystery"/],
    ["a manifest without supported runtimes", ["mystery"], undefined, /declares no supported runtime/],
    ["an empty matcher", ["codex"], { matcher: [] }, /empty matcher/],
    ["an untrimmed matcher entry", ["codex"], { matcher: [" exec"] }, /use "exec"/],
    ["an uppercase matcher entry", ["codex"], { matcher: ["Exec"] }, /not a canonical tool id/],
    ["an empty matcher entry", ["codex"], { matcher: [""] }, /not a canonical tool id/],
    ["a matcher entry with spaces", ["codex"], { matcher: ["run command"] }, /not a canonical tool id/],
  ])("rejects %s at registration", (_name, declared, options, message) => {
    const registry = createToolResultMiddlewareRegistry({ supportedRuntimes: RUNTIMES });
    const register = () => registry.register(plugin("p", declared), tag("x"), options);
    expect(register).toThrow(MiddlewareRegistrationError);
    expect(register).toThrow(message);
    expect(registry.registrations()).toEqual([]);
  });

  test("rejects a manifest without the contract", () => {
    const registry = createToolResultMiddlewareRegistry();
    expect(() => registry.register({ id: "p", manifest: { contracts: {} } } as never, tag("x"))).toThrow(/does not declare contracts.agentToolResultMiddleware/);
  });

  test("accepts canonical matcher ids with namespaces", () => {
    const registry = createToolResultMiddlewareRegistry();
    registry.register(plugin("p", ["codex"]), tag("x"), { matcher: ["mcp:github.create_issue", "get_page_context", "a-b"] });
    expect(registry.registrations()[0]?.matcher).toEqual(["mcp:github.create_issue", "get_page_context", "a-b"]);
  });
});

describe("tool-result middleware application", () => {
  test("runs matching handlers in registration order and keeps each (runtimes, matcher) pair intact", async () => {
    const registry = createToolResultMiddlewareRegistry({ supportedRuntimes: RUNTIMES });
    const shared = tag("shared");
    const p = plugin("p", ["codex", "openclaw"]);
    registry.register(p, shared, { runtimes: ["codex"], matcher: ["exec"] });
    registry.register(p, shared, { runtimes: ["openclaw"], matcher: ["echo"] });
    registry.register(plugin("all", ["codex", "openclaw"]), tag("all"));

    expect((await registry.apply("codex", call("exec"))).result).toBe("out|shared|all");
    expect((await registry.apply("codex", call("echo"))).result).toBe("out|all");
    expect((await registry.apply("openclaw", call("echo"))).result).toBe("out|shared|all");
    expect((await registry.apply("openclaw", call("exec"))).result).toBe("out|all");
    const untouched = await registry.apply("countersign", call("exec"));
    expect(untouched).toEqual({ result: "out", isError: false, appliedBy: [], skipped: [], sourceReplyDelivered: false });
  });

  test("matches runtime tool names case-insensitively against canonical ids", async () => {
    const registry = createToolResultMiddlewareRegistry();
    registry.register(plugin("p", ["codex"]), tag("x"), { matcher: ["exec"] });
    expect((await registry.apply("codex", call(" EXEC "))).result).toBe("out|x");
  });

  test("awaits async transforms in order", async () => {
    const registry = createToolResultMiddlewareRegistry();
    const order: string[] = [];
    registry.register(plugin("slow", ["codex"]), async ({ result }) => {
      await new Promise((r) => setTimeout(r, 5));
      order.push("slow");
      return { result: `${String(result)}|slow` };
    });
    registry.register(plugin("fast", ["codex"]), ({ result }) => {
      order.push("fast");
      return { result: `${String(result)}|fast` };
    });
    expect((await registry.apply("codex", call())).result).toBe("out|slow|fast");
    expect(order).toEqual(["slow", "fast"]);
  });

  test("keeps the original execution failure visible when middleware rewrites the content", async () => {
    const registry = createToolResultMiddlewareRegistry();
    registry.register(plugin("prettify", ["codex"]), () => ({ result: "Everything went fine!", isError: false }));
    const seen = vi.fn<TToolResultMiddleware>(() => undefined);
    registry.register(plugin("observer", ["codex"]), seen);
    const applied = await registry.apply("codex", call("exec", { error: "exit 2" }, true));
    expect(applied).toMatchObject({ result: "Everything went fine!", isError: true, originalError: { error: "exit 2" }, appliedBy: ["prettify"] });
    expect(seen.mock.calls[0]?.[0]).toMatchObject({ isError: true, original: { isError: true, result: { error: "exit 2" } } });
  });

  test("middleware may mark a success as failed but then there is no originalError", async () => {
    const registry = createToolResultMiddlewareRegistry();
    registry.register(plugin("strict", ["codex"]), () => ({ result: "blocked", isError: true }));
    const applied = await registry.apply("codex", call());
    expect(applied.isError).toBe(true);
    expect("originalError" in applied).toBe(false);
  });

  test("a throwing, rejecting or malformed middleware is skipped and reported without losing the result", async () => {
    const failures: string[] = [];
    const registry = createToolResultMiddlewareRegistry({ onMiddlewareError: (f) => failures.push(f.pluginId) });
    registry.register(plugin("a", ["codex"]), tag("a"));
    registry.register(plugin("throws", ["codex"]), () => {
      throw new Error("boom");
    });
    registry.register(plugin("rejects", ["codex"]), async () => {
      throw new Error("async boom");
    });
    registry.register(plugin("malformed", ["codex"]), (() => "not a patch") as unknown as TToolResultMiddleware);
    registry.register(plugin("b", ["codex"]), tag("b"));
    const applied = await registry.apply("codex", call("exec", "out", true));
    expect(applied.result).toBe("out|a|b");
    expect(applied.isError).toBe(true);
    expect(applied.originalError).toBe("out");
    expect(applied.skipped.map((s) => s.pluginId)).toEqual(["throws", "rejects", "malformed"]);
    expect(failures).toEqual(["throws", "rejects", "malformed"]);
  });

  test("retains sourceReplyDelivered from the original result before transforms", async () => {
    const registry = createToolResultMiddlewareRegistry();
    registry.register(plugin("strip", ["codex"]), () => ({ result: "sent" }));
    const original = { text: "ok", details: { messageDelivery: { sourceReplyDelivered: true } } };
    expect((await registry.apply("codex", call("message", original))).sourceReplyDelivered).toBe(true);
    expect((await registry.apply("codex", call("message", "plain"))).sourceReplyDelivered).toBe(false);
  });

  test("unregister stops a registration; an unknown runtime is refused", async () => {
    const registry = createToolResultMiddlewareRegistry();
    const unregister = registry.register(plugin("p", ["codex"]), tag("x"));
    unregister();
    expect((await registry.apply("codex", call())).result).toBe("out");
    await expect(registry.apply("nope", call())).rejects.toThrow(/not supported/);
  });

  test("refuses an empty supported runtime list", () => {
    expect(() => createToolResultMiddlewareRegistry({ supportedRuntimes: [] })).toThrow(TypeError);
  });
});
