import { SourceBoundInjectionUnsupportedError } from "./errors";
import {
  assertInjectionRequest,
  type TAssertCurrent,
  type TInjectionAuthorityKind,
  type TMessageInjectionV2,
  type TQueueMessageOptions,
  type TQueueMessageResult,
} from "./injection-guard";

/** V1 queue options as shipped; the two guarded fields exist only so a caller's mistake is refused, not ignored. */
export type TV1QueueMessageOptions = Omit<TQueueMessageOptions, "currentInboundContext"> & {
  /** A source-bound request through V1 is refused before queue or I/O. */
  authorityKind?: TInjectionAuthorityKind;
  /** V1 cannot carry a per-injection assertion; supplying one is refused like a source-bound request. */
  assertCurrent?: TAssertCurrent;
};

/** The legacy (V1) active-run injection capability: unchecked, for ordinary input only. */
export type TMessageInjectionV1 = {
  readonly version: 1;
  isAvailable: () => boolean;
  queueMessage: (text: string, options?: TV1QueueMessageOptions) => Promise<void>;
};

/** Options for {@link createV1Injection}. */
export type TV1InjectionOptions = {
  isRunLive: () => boolean;
  /** The backend's existing unchecked send; it receives only the shipped V1 options. */
  enqueue: (text: string, options: Omit<TV1QueueMessageOptions, "authorityKind" | "assertCurrent">) => void | Promise<void>;
};

/**
 * Creates a V1 injection handle for a backend that cannot enforce a final-dispatch assertion.
 * Ordinary input behaves as before. A source-bound request (or one carrying an assertion) rejects
 * with {@link SourceBoundInjectionUnsupportedError} before `enqueue` is called, so it never falls
 * back to the unchecked path.
 */
export function createV1Injection(options: TV1InjectionOptions): TMessageInjectionV1 {
  return {
    version: 1,
    isAvailable: () => {
      try {
        return options.isRunLive() === true;
      } catch {
        return false;
      }
    },
    async queueMessage(text, queueOptions = {}) {
      const { authorityKind, assertCurrent, ...shipped } = queueOptions;
      if (authorityKind === "source-bound" || assertCurrent !== undefined) throw new SourceBoundInjectionUnsupportedError();
      await options.enqueue(text, shipped);
    },
  };
}

/** One injection request from the host, before it knows which capability the backend offers. */
export type TGuardedInjectionRequest = {
  text: string;
  options: TQueueMessageOptions;
  assertCurrent: TAssertCurrent;
  authorityKind: TInjectionAuthorityKind;
};

/**
 * Routes a host injection to the backend's capability. V2 receives the assertion and authority
 * kind as given. V1 accepts only `run` input, after the assertion passes synchronously; a
 * source-bound request throws {@link SourceBoundInjectionUnsupportedError} before any queue or
 * I/O. Without a capability, or when it is unavailable, the input is refused (`accepted: false`).
 */
export async function queueGuardedInjection(
  capability: TMessageInjectionV1 | TMessageInjectionV2 | undefined,
  request: TGuardedInjectionRequest,
): Promise<TQueueMessageResult> {
  const { text, options, assertCurrent, authorityKind } = request;
  assertInjectionRequest(assertCurrent, authorityKind);
  if (capability?.version === 2) return capability.queueMessage(text, options, assertCurrent, authorityKind);
  if (authorityKind === "source-bound") throw new SourceBoundInjectionUnsupportedError();
  let current = false;
  try {
    current = capability?.isAvailable() === true && assertCurrent() === true;
  } catch {
    current = false;
  }
  if (!capability || !current) {
    options.onQueueAccepted?.(false);
    options.onQueueSettled?.("rejected");
    return { accepted: false, outcome: "rejected" };
  }
  const { currentInboundContext: _context, ...shipped } = options;
  await capability.queueMessage(text, shipped);
  return { accepted: true, outcome: "pending" };
}
