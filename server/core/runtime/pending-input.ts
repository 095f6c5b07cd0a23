import { InjectionRevokedError, UnguardedPendingInputCommitError } from "./errors";
import type { TInjectionAuthorityKind, TInjectionGuard } from "./injection-guard";

declare const committedBrand: unique symbol;

/** Proof that a pending-input port performed its final write through the guarded boundary. */
export type TCommitted<T> = { readonly value: T; readonly [committedBrand]: true };

/**
 * The final claim boundary: re-checks the live run and the injection's assertion, then starts
 * `write` synchronously with no await in between. Throws {@link InjectionRevokedError} when not
 * current, without calling `write`.
 */
export type TGuardedCommit = <T>(write: () => T | Promise<T>) => Promise<TCommitted<T>>;

/** Extra facts about a pending-input answer. */
export type TPendingInputOptions = { questionId?: string; currentInboundContext?: string };

/**
 * The backend's question store. Each method may await (lookup, registration, persistence) but
 * must perform its final claim or cancellation inside `commit` and resolve with what `commit`
 * returned; `value` is true when a pending input was claimed or cancelled.
 */
export type TPendingInputPort = {
  claim: (
    request: { text: string; options: TPendingInputOptions; authorityKind: TInjectionAuthorityKind },
    commit: TGuardedCommit,
  ) => Promise<TCommitted<boolean>>;
  cancel: (request: { resolvedBy: string; authorityKind: TInjectionAuthorityKind }, commit: TGuardedCommit) => Promise<TCommitted<boolean>>;
};

/** How a guarded claim or cancellation ended. */
export type TPendingInputOutcome = "done" | "not-pending" | "rejected";

/**
 * Runs one pending-input operation under `guard`: checked before any I/O, and again at the
 * port's final commit. A revoked or ended run yields `rejected`; a port that resolves without a
 * token from its own `commit` throws {@link UnguardedPendingInputCommitError}.
 */
export async function runGuardedPendingInput(
  guard: TInjectionGuard,
  operation: (commit: TGuardedCommit) => Promise<TCommitted<boolean>>,
): Promise<TPendingInputOutcome> {
  if (guard.check() !== "current") return "rejected";
  const issued = new WeakSet<object>();
  const commit: TGuardedCommit = async <T>(write: () => T | Promise<T>) => {
    if (guard.check() !== "current") throw new InjectionRevokedError();
    // write() starts in the same synchronous block as the check; only its completion is awaited.
    const pending = write();
    const token = { value: await pending } as TCommitted<T>;
    issued.add(token);
    return token;
  };
  let committed: TCommitted<boolean>;
  try {
    committed = await operation(commit);
  } catch (error) {
    if (error instanceof InjectionRevokedError) return "rejected";
    throw error;
  }
  if (typeof committed !== "object" || committed === null || !issued.has(committed)) {
    throw new UnguardedPendingInputCommitError(
      "The pending-input port finished without committing through its guarded boundary, so the answer cannot be trusted as current.",
    );
  }
  return committed.value === true ? "done" : "not-pending";
}
