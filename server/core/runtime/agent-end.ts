/** One agent_end hook; may be sync or async. */
export type TAgentEndHook<TPayload> = (payload: TPayload) => unknown;

/** Inputs for {@link runAgentEndSideEffects} and {@link awaitAgentEndSideEffects}. */
export type TAgentEndSideEffectsParams<TPayload> = {
  /** Prepares transcript anchors through the history reader; awaited before the lease is released. */
  prepareTranscriptAnchors: () => Promise<void> | void;
  /** Releases the turn lease; called exactly once, after anchor preparation settles. */
  releaseTurnLease: () => Promise<void> | void;
  hooks: readonly TAgentEndHook<TPayload>[];
  /** The `{ event, ctx }` payload every hook receives. */
  payload: TPayload;
  /** Receives each hook failure; hooks never change the attempt result. */
  onHookError: (error: unknown, hook: { index: number }) => void;
  /** Receives an anchor preparation failure; when omitted, that failure rejects after the lease is released and hooks started. */
  onAnchorError?: (error: unknown) => void;
};

/** What {@link runAgentEndSideEffects} hands back once hooks have started. */
export type TAgentEndSideEffects = {
  /** Settles when every hook has finished; never rejects. */
  hooksSettled: Promise<void>;
};

/**
 * Runs the side effects of a finalized attempt in their required order: awaits transcript anchor
 * preparation, then releases the turn lease (even if preparation failed), then starts every hook
 * and returns without waiting for them. Hook failures go to `onHookError` and never reject; the
 * returned promise rejects only when releasing the lease fails, or anchors fail without `onAnchorError`.
 */
export async function runAgentEndSideEffects<TPayload>(params: TAgentEndSideEffectsParams<TPayload>): Promise<TAgentEndSideEffects> {
  let anchorFailure: { error: unknown } | null = null;
  try {
    await params.prepareTranscriptAnchors();
  } catch (error) {
    anchorFailure = { error };
  }
  // The lease is released only after anchors settle, so the next turn never reads a half-written anchor.
  let leaseFailure: { error: unknown } | null = null;
  try {
    await params.releaseTurnLease();
  } catch (error) {
    leaseFailure = { error };
  }
  const hooksSettled = startHooks(params);
  if (leaseFailure) throw leaseFailure.error;
  if (anchorFailure) {
    if (!params.onAnchorError) throw anchorFailure.error;
    try {
      params.onAnchorError(anchorFailure.error);
    } catch {
      // Diagnostics only: the attempt already finalized.
    }
  }
  return { hooksSettled };
}

/**
 * Like {@link runAgentEndSideEffects}, and also waits for every hook, for local non-interactive
 * runs that must not exit before plugin hooks finish. Still never rejects because of a hook.
 */
export async function awaitAgentEndSideEffects<TPayload>(params: TAgentEndSideEffectsParams<TPayload>): Promise<void> {
  const { hooksSettled } = await runAgentEndSideEffects(params);
  await hooksSettled;
}

function startHooks<TPayload>(params: TAgentEndSideEffectsParams<TPayload>): Promise<void> {
  const report = (error: unknown, index: number): void => {
    try {
      params.onHookError(error, { index });
    } catch {
      // A failing reporter must not surface as a hook failure of the attempt.
    }
  };
  const running = params.hooks.map(async (hook, index) => {
    try {
      await hook(params.payload);
    } catch (error) {
      report(error, index);
    }
  });
  return Promise.all(running).then(() => undefined);
}
