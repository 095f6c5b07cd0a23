import { describe, expect, test } from "vitest";
import { AttemptCancelledError, createAttemptCancellation } from "./cancellation";
import { AdmissionClosedError, AttemptRuntimeError } from "./errors";

describe("createAttemptCancellation", () => {
  test("starts open and not cancelled", () => {
    const cancellation = createAttemptCancellation();
    expect(cancellation.signal.aborted).toBe(false);
    expect(cancellation.reason()).toBeNull();
    expect(cancellation.isAdmissionOpen()).toBe(true);
    expect(cancellation.admit(() => 42)).toBe(42);
  });

  test("keeps the first explicit reason and records later ones as extra", () => {
    const cancellation = createAttemptCancellation();
    expect(cancellation.cancel({ kind: "user", message: "Stopped by Ada.", by: "user_1" })).toBe(true);
    expect(cancellation.cancel({ kind: "timeout", message: "Execution deadline passed." })).toBe(false);
    expect(cancellation.cancel({ kind: "shutdown", message: "Server stopping." })).toBe(false);
    expect(cancellation.reason()).toEqual({ kind: "user", message: "Stopped by Ada.", by: "user_1" });
    expect(cancellation.extraReasons().map((r) => r.kind)).toEqual(["timeout", "shutdown"]);
  });

  test("aborts the signal with an error carrying the first reason", () => {
    const cancellation = createAttemptCancellation();
    const seen: unknown[] = [];
    cancellation.signal.addEventListener("abort", () => seen.push(cancellation.signal.reason));
    cancellation.cancel({ kind: "revoked", message: "The grant was revoked." });
    cancellation.cancel({ kind: "user", message: "Too late." });
    expect(seen).toHaveLength(1);
    const reason = cancellation.signal.reason as AttemptCancelledError;
    expect(reason).toBeInstanceOf(AttemptCancelledError);
    expect(reason).toBeInstanceOf(AttemptRuntimeError);
    expect(reason.reason.kind).toBe("revoked");
    expect(reason.message).toBe("The grant was revoked.");
    expect(reason.code).toBe("conflict");
  });

  test("the stored reason is a frozen copy", () => {
    const cancellation = createAttemptCancellation();
    const reason = { kind: "user" as const, message: "Stop." };
    cancellation.cancel(reason);
    reason.message = "changed";
    expect(cancellation.reason()?.message).toBe("Stop.");
    expect(Object.isFrozen(cancellation.reason())).toBe(true);
  });

  test("freeze closes admission without cancelling", () => {
    const cancellation = createAttemptCancellation();
    cancellation.freeze();
    expect(cancellation.signal.aborted).toBe(false);
    expect(cancellation.isAdmissionOpen()).toBe(false);
    expect(() => cancellation.assertAdmissible()).toThrow(AdmissionClosedError);
    expect(() => cancellation.assertAdmissible()).toThrow(/terminal boundary/);
  });

  test("cancel closes admission and admit never calls the work", () => {
    const cancellation = createAttemptCancellation();
    cancellation.cancel({ kind: "superseded", message: "A newer attempt took over." });
    let ran = false;
    const attempt = () =>
      cancellation.admit(() => {
        ran = true;
      });
    expect(attempt).toThrow(AdmissionClosedError);
    expect(attempt).toThrow(/superseded: A newer attempt took over/);
    expect(ran).toBe(false);
    try {
      cancellation.assertAdmissible();
    } catch (error) {
      expect((error as AdmissionClosedError).runtimeCode).toBe("admission_closed");
    }
  });

  test("admit returns the promise of async work admitted before the freeze", async () => {
    const cancellation = createAttemptCancellation();
    const work = cancellation.admit(async () => "done");
    cancellation.freeze();
    await expect(work).resolves.toBe("done");
  });

  test.each([
    ["an unknown kind", { kind: "bored", message: "x" }],
    ["an empty message", { kind: "user", message: "  " }],
  ])("rejects %s without cancelling", (_name, reason) => {
    const cancellation = createAttemptCancellation();
    expect(() => cancellation.cancel(reason as never)).toThrow(TypeError);
    expect(cancellation.signal.aborted).toBe(false);
  });
});
