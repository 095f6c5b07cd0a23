import { afterEach, describe, expect, test, vi } from "vitest";
import { type TTopic, waitFor } from "./wait-for";

/**
 * The server's one wait, on a fake clock: what ends a wait (a wake, the poll, the deadline) is
 * told apart by which timers were allowed to fire, never by measuring how long it took.
 */

/** A topic the test wakes by hand; `subscribed` counts live subscriptions. */
function manualTopic() {
  const wakes = new Set<() => void>();
  const topic: TTopic = (wake) => {
    wakes.add(wake);
    return () => {
      wakes.delete(wake);
    };
  };
  const wakeAll = () => {
    for (const w of [...wakes]) w();
  };
  return { topic, wake: wakeAll, subscribed: () => wakes.size };
}

/** Lets pending promise callbacks run without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe("waitFor", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test("a wake ends the wait at once: no poll and no deadline has to pass", async () => {
    vi.useFakeTimers({ now: 0 });
    const { topic, wake, subscribed } = manualTopic();
    let value: string | null = null;
    let checks = 0;
    let result: string | null | undefined;
    void waitFor(topic, async () => {
      checks++;
      return value;
    }, { deadline: 600_000, pollMs: 5000 }).then((r) => {
      result = r;
    });
    await settle();
    expect(checks).toBe(1);
    expect(subscribed()).toBe(1);
    expect(result).toBeUndefined();

    value = "answered";
    wake();
    await settle();
    expect(result).toBe("answered");
    expect(checks).toBe(2);
    expect(Date.now()).toBe(0);
    expect(subscribed()).toBe(0);
  });

  test("a wake during a check is not lost: the check runs again", async () => {
    vi.useFakeTimers({ now: 0 });
    const { topic, wake } = manualTopic();
    let value: string | null = null;
    let checks = 0;
    let result: string | null | undefined;
    void waitFor(
      topic,
      async () => {
        checks++;
        // The change lands (and is announced) while the first check is reading the old state.
        if (checks === 1) {
          value = "answered";
          wake();
          return null;
        }
        return value;
      },
      { deadline: 600_000, pollMs: 5000 },
    ).then((r) => {
      result = r;
    });
    await settle();
    expect(result).toBe("answered");
    expect(checks).toBe(2);
    expect(Date.now()).toBe(0);
  });

  test("without a wake, the poll re-checks; the deadline answers null", async () => {
    vi.useFakeTimers({ now: 0 });
    const { topic, subscribed } = manualTopic();
    let checks = 0;
    let result: string | null | undefined;
    void waitFor(topic, async () => {
      checks++;
      return null;
    }, { deadline: 12_000, pollMs: 5000 }).then((r) => {
      result = r;
    });
    await settle();
    expect(checks).toBe(1);
    await vi.advanceTimersByTimeAsync(4999);
    expect(checks).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks).toBe(2);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(7000);
    expect(result).toBeNull();
    expect(subscribed()).toBe(0);
  });
});
