import { describe, expect, test, vi } from "vitest";
import { UnguardedPendingInputCommitError } from "./errors";
import { createInjectionQueue } from "./injection-queue";
import type { TCommitted, TPendingInputPort } from "./pending-input";

function setup(port: Partial<TPendingInputPort> = {}) {
  const run = { live: true };
  const writes: string[] = [];
  const pendingInput: TPendingInputPort = {
    // Registration and persistence await before the final claim, as a real question store would.
    claim: async ({ text }, commit) => {
      await Promise.resolve();
      await Promise.resolve();
      return commit(() => {
        writes.push(`claim:${text}`);
        return true;
      });
    },
    cancel: async ({ resolvedBy }, commit) => {
      await Promise.resolve();
      return commit(async () => {
        writes.push(`cancel:${resolvedBy}`);
        return true;
      });
    },
    ...port,
  };
  const queue = createInjectionQueue({ isRunLive: () => run.live, dispatch: async () => {}, autoDrain: false, pendingInput });
  return { run, writes, handle: queue.handle, close: queue.close };
}

describe("V2 pending user input", () => {
  test("claims and cancels through the guarded final boundary", async () => {
    const { handle, writes } = setup();
    await expect(handle.claimPendingUserInputAnswer?.("blue", { questionId: "q1" }, () => true, "source-bound")).resolves.toBe("claimed");
    await expect(handle.cancelPendingUserInput?.("user_1", () => true, "run")).resolves.toBe("cancelled");
    expect(writes).toEqual(["claim:blue", "cancel:user_1"]);
  });

  test("carries the assertion to the final claim: a revocation during persistence rejects before the write", async () => {
    const { handle, writes } = setup();
    let current = true;
    const claim = handle.claimPendingUserInputAnswer?.("blue", {}, () => current, "source-bound");
    current = false; // revoked while the store awaited registration and persistence
    await expect(claim).resolves.toBe("rejected");
    current = true;
    await expect(handle.claimPendingUserInputAnswer?.("blue", {}, () => current, "source-bound")).resolves.toBe("claimed");
    expect(writes).toEqual(["claim:blue"]);
  });

  test("the same assertion stays revoked after it once failed", async () => {
    const { handle, writes } = setup();
    let current = false;
    const assertCurrent = () => current;
    await expect(handle.cancelPendingUserInput?.("user_1", assertCurrent, "source-bound")).resolves.toBe("rejected");
    current = true;
    await expect(handle.cancelPendingUserInput?.("user_1", assertCurrent, "source-bound")).resolves.toBe("rejected");
    expect(writes).toEqual([]);
  });

  test("a failed pre-check never reaches the port", async () => {
    const claim = vi.fn();
    const { handle, run } = setup({ claim });
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, () => false, "run")).resolves.toBe("rejected");
    run.live = false;
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, () => true, "run")).resolves.toBe("rejected");
    expect(claim).not.toHaveBeenCalled();
  });

  test("a throwing assertion rejects", async () => {
    const { handle } = setup();
    const assertCurrent = () => {
      throw new Error("source lookup failed");
    };
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, assertCurrent, "source-bound")).resolves.toBe("rejected");
  });

  test("reports not-pending when the store had no pending input", async () => {
    const { handle } = setup({ claim: async (_request, commit) => commit(() => false) });
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, () => true, "run")).resolves.toBe("not-pending");
  });

  test("a port that skips the guarded commit is refused", async () => {
    const forged = { value: true } as TCommitted<boolean>;
    const { handle } = setup({ claim: async () => forged });
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, () => true, "run")).rejects.toThrow(UnguardedPendingInputCommitError);
  });

  test("port failures other than revocation propagate", async () => {
    const { handle } = setup({
      cancel: async () => {
        throw new Error("store down");
      },
    });
    await expect(handle.cancelPendingUserInput?.("u", () => true, "run")).rejects.toThrow("store down");
  });

  test("a closed queue rejects pending-input operations", async () => {
    const { handle, close } = setup();
    close();
    await expect(handle.claimPendingUserInputAnswer?.("x", {}, () => true, "run")).resolves.toBe("rejected");
    await expect(handle.cancelPendingUserInput?.("u", () => true, "run")).resolves.toBe("rejected");
  });
});
