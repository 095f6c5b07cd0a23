import { afterEach, describe, expect, test, vi } from "vitest";
import { createAttemptDeadlineController, type TAttemptTimeoutKind } from "./deadline";

/** A hand-driven clock: timers fire only when `advance` passes their due time. */
function fakeClock(startMs: number) {
  let nowMs = startMs;
  let nextId = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  return {
    now: () => nowMs,
    setTimer: (fn: () => void, delayMs: number) => {
      const id = ++nextId;
      timers.set(id, { due: nowMs + delayMs, fn });
      return id;
    },
    clearTimer: (handle: unknown) => {
      timers.delete(handle as number);
    },
    advance(ms: number) {
      const until = nowMs + ms;
      for (;;) {
        const next = [...timers.entries()].sort((a, b) => a[1].due - b[1].due).find(([, t]) => t.due <= until);
        if (!next) break;
        timers.delete(next[0]);
        nowMs = Math.max(nowMs, next[1].due);
        next[1].fn();
      }
      nowMs = until;
    },
    pending: () => timers.size,
  };
}

function setup(overrides: { startedAtMs?: number; timeoutMs?: number; settlementTimeoutMs?: number; signal?: AbortSignal } = {}) {
  const clock = fakeClock(1_000);
  const fired: TAttemptTimeoutKind[] = [];
  const controller = createAttemptDeadlineController({
    startedAtMs: overrides.startedAtMs ?? 1_000,
    timeoutMs: overrides.timeoutMs ?? 100,
    settlementTimeoutMs: overrides.settlementTimeoutMs ?? 30,
    signal: overrides.signal,
    onTimeout: (kind) => fired.push(kind),
    now: clock.now,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
  });
  return { clock, fired, controller };
}

describe("createAttemptDeadlineController", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test("fires the execution deadline once at startedAtMs + timeoutMs", () => {
    const { clock, fired, controller } = setup();
    expect(controller.state()).toEqual({ executionDeadlineMs: 1_100, settlementDeadlineMs: null, closed: false });
    clock.advance(99);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual(["execution"]);
    clock.advance(10_000);
    expect(fired).toEqual(["execution"]);
  });

  test("counts from the original start, so a resumed attempt does not get a fresh budget", () => {
    const { clock, fired } = setup({ startedAtMs: 950 });
    clock.advance(50);
    expect(fired).toEqual(["execution"]);
  });

  test("a deadline already past fires on the next timer turn, not synchronously", () => {
    const { clock, fired } = setup({ startedAtMs: 0, timeoutMs: 10 });
    expect(fired).toEqual([]);
    clock.advance(0);
    expect(fired).toEqual(["execution"]);
  });

  test("the first beginSettlement sets an absolute deadline; later calls do not extend it", () => {
    const { clock, fired, controller } = setup();
    clock.advance(50);
    controller.beginSettlement(1_040);
    expect(controller.state().settlementDeadlineMs).toBe(1_070);
    clock.advance(10);
    controller.beginSettlement(1_060);
    controller.beginSettlement(5_000);
    expect(controller.state().settlementDeadlineMs).toBe(1_070);
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual(["settlement"]);
    clock.advance(1_000);
    expect(fired).toEqual(["settlement"]);
  });

  test("settlement stops the execution deadline", () => {
    const { clock, fired, controller } = setup({ settlementTimeoutMs: 500 });
    controller.beginSettlement(1_090);
    clock.advance(200);
    expect(fired).toEqual([]);
    clock.advance(400);
    expect(fired).toEqual(["settlement"]);
  });

  test("settlement can still be bounded after the execution deadline fired", () => {
    const { clock, fired, controller } = setup();
    clock.advance(100);
    controller.beginSettlement(clock.now());
    clock.advance(30);
    expect(fired).toEqual(["execution", "settlement"]);
  });

  test("dispose closes everything and is idempotent", () => {
    const { clock, fired, controller } = setup();
    controller.beginSettlement(1_010);
    controller.dispose();
    controller.dispose();
    expect(clock.pending()).toBe(0);
    clock.advance(10_000);
    controller.beginSettlement(1_500);
    expect(fired).toEqual([]);
    expect(controller.state()).toEqual({ executionDeadlineMs: 1_100, settlementDeadlineMs: 1_040, closed: true });
  });

  test("aborting the signal closes the controller", () => {
    const abort = new AbortController();
    const { clock, fired, controller } = setup({ signal: abort.signal });
    abort.abort();
    clock.advance(10_000);
    expect(fired).toEqual([]);
    expect(controller.state().closed).toBe(true);
  });

  test("an already aborted signal arms nothing", () => {
    const abort = new AbortController();
    abort.abort();
    const { clock, fired, controller } = setup({ signal: abort.signal });
    expect(clock.pending()).toBe(0);
    controller.beginSettlement(1_000);
    clock.advance(10_000);
    expect(fired).toEqual([]);
  });

  test("a callback that was already queued when disposed does not fire", () => {
    const clock = fakeClock(0);
    const fired: string[] = [];
    let queued: (() => void) | null = null;
    const controller = createAttemptDeadlineController({
      startedAtMs: 0,
      timeoutMs: 10,
      settlementTimeoutMs: 10,
      onTimeout: (kind) => fired.push(kind),
      now: clock.now,
      setTimer: (fn) => {
        queued = fn;
        return 1;
      },
      clearTimer: () => {},
    });
    controller.dispose();
    clock.advance(20);
    (queued as (() => void) | null)?.();
    expect(fired).toEqual([]);
  });

  test("a deadline beyond the platform timer limit is re-armed instead of firing early", () => {
    vi.useFakeTimers({ now: 0 });
    const fired: string[] = [];
    const day = 24 * 60 * 60 * 1_000;
    createAttemptDeadlineController({ startedAtMs: 0, timeoutMs: 30 * day, settlementTimeoutMs: 0, onTimeout: (kind) => fired.push(kind) });
    vi.advanceTimersByTime(29 * day);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(day);
    expect(fired).toEqual(["execution"]);
  });

  test("Infinity means no execution deadline", () => {
    const { clock, fired, controller } = setup({ timeoutMs: Number.POSITIVE_INFINITY });
    expect(clock.pending()).toBe(0);
    clock.advance(1e9);
    expect(fired).toEqual([]);
    controller.beginSettlement(clock.now());
    clock.advance(30);
    expect(fired).toEqual(["settlement"]);
  });

  test.each([
    ["negative timeoutMs", { timeoutMs: -1 }],
    ["NaN settlementTimeoutMs", { settlementTimeoutMs: Number.NaN }],
    ["non-finite startedAtMs", { startedAtMs: Number.POSITIVE_INFINITY }],
  ])("rejects %s", (_name, overrides) => {
    expect(() => setup(overrides)).toThrow(RangeError);
  });

  test("rejects a non-finite receivedAtMs", () => {
    const { controller } = setup();
    expect(() => controller.beginSettlement(Number.NaN)).toThrow(RangeError);
    expect(controller.state().settlementDeadlineMs).toBeNull();
  });
});
