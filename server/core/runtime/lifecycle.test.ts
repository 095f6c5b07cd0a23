import { describe, expect, test, vi } from "vitest";
import { LifecycleTransitionError } from "./errors";
import { emitAttemptEvent } from "./events";
import { createAttemptLifecycle, type TAttemptLifecycleEvent } from "./lifecycle";

function setup() {
  const events: TAttemptLifecycleEvent[] = [];
  let t = 0;
  const lifecycle = createAttemptLifecycle({ emit: (event) => void events.push(event), now: () => ++t });
  return { lifecycle, events, phases: () => events.map((e) => e.phase) };
}

describe("createAttemptLifecycle", () => {
  test("emits the full path once, with suspend/resume cycles", () => {
    const { lifecycle, phases, events } = setup();
    for (const phase of ["admitted", "preparing", "running", "suspended", "running", "suspended", "running", "settling", "settled"] as const) {
      lifecycle.transition(phase);
    }
    expect(phases()).toEqual(["admitted", "preparing", "running", "suspended", "running", "suspended", "running", "settling", "settled"]);
    expect(events[1]).toEqual({ type: "attempt.lifecycle", phase: "preparing", previousPhase: "admitted", atMs: 2 });
  });

  test("deduplicates repeated reports of the current phase", () => {
    const { lifecycle, phases } = setup();
    expect(lifecycle.transition("admitted")).toBe(true);
    expect(lifecycle.transition("admitted")).toBe(false);
    lifecycle.transition("running", { source: "backend" });
    expect(lifecycle.transition("running", { source: "host" })).toBe(false);
    expect(phases()).toEqual(["admitted", "running"]);
  });

  test("allows forward skips such as a cancellation straight to settled", () => {
    const { lifecycle, phases } = setup();
    lifecycle.transition("admitted");
    lifecycle.transition("settled", { reason: "cancelled" });
    expect(phases()).toEqual(["admitted", "settled"]);
  });

  test.each([
    ["preparing", "admitted"],
    ["running", "preparing"],
    ["suspended", "preparing"],
    ["settling", "running"],
    ["settling", "suspended"],
    ["settled", "settling"],
    ["settled", "running"],
  ] as const)("rejects %s → %s without emitting", (from, to) => {
    const { lifecycle, phases } = setup();
    lifecycle.transition(from);
    expect(lifecycle.canTransition(to)).toBe(false);
    expect(() => lifecycle.transition(to)).toThrow(LifecycleTransitionError);
    expect(phases()).toEqual([from]);
    expect(lifecycle.phase()).toBe(from);
  });

  test("rejects an unknown phase", () => {
    const { lifecycle } = setup();
    expect(() => lifecycle.transition("paused" as never)).toThrow(TypeError);
    expect(() => lifecycle.transition("toString" as never)).toThrow(TypeError);
  });

  test("a failing emitter is reported and does not stop the lifecycle", async () => {
    const onObserverError = vi.fn();
    const lifecycle = createAttemptLifecycle({
      emit: async (event) => {
        if (event.phase === "running") throw new Error("sink down");
      },
      onObserverError,
    });
    lifecycle.transition("admitted");
    expect(lifecycle.transition("running")).toBe(true);
    expect(lifecycle.transition("settled")).toBe(true);
    await lifecycle.flush();
    expect(onObserverError).toHaveBeenCalledTimes(1);
    expect(onObserverError.mock.calls[0]?.[1].event.phase).toBe("running");
    expect(lifecycle.phase()).toBe("settled");
  });
});

describe("emitAttemptEvent", () => {
  test("isolates throwing and rejecting observers from each other and from the caller", async () => {
    const delivered: string[] = [];
    const errors: Array<{ message: string; index: number }> = [];
    const done = emitAttemptEvent(
      [
        () => {
          throw new Error("sync boom");
        },
        async () => {
          throw new Error("async boom");
        },
        (event: string) => void delivered.push(`third:${event}`),
        async (event: string) => {
          delivered.push(`fourth:${event}`);
        },
      ],
      "tick",
      (error, { index }) => errors.push({ message: (error as Error).message, index }),
    );
    // Synchronous observers have all been called before the emit returns.
    expect(delivered).toEqual(["third:tick", "fourth:tick"]);
    await expect(done).resolves.toBeUndefined();
    expect(errors).toEqual([
      { message: "sync boom", index: 0 },
      { message: "async boom", index: 1 },
    ]);
  });

  test("a throwing error reporter is swallowed", async () => {
    const done = emitAttemptEvent([() => Promise.reject(new Error("x"))], 1, () => {
      throw new Error("reporter down");
    });
    await expect(done).resolves.toBeUndefined();
  });

  test("without a reporter failures are still contained", async () => {
    await expect(emitAttemptEvent([() => Promise.reject(new Error("x"))], 1)).resolves.toBeUndefined();
  });
});
