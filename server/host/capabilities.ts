import { DomainError } from "../core/errors";
import type { TNewEvent } from "../core/frames";
import { boundAndRedact } from "../core/redact";
import {
  assertInjectionRequest,
  type TAssertCurrent,
  type TInjectionAuthorityKind,
  type TQueueMessageOptions,
  type TReportOutputTokens,
  classifyTerminalOutcome,
} from "../core/runtime";
import type { THostCapabilities } from "../../plugin-sdk/capabilities";
import type { TDeps } from "./deps";
import type { SteeringDesk } from "./steering";
import type { Db } from "../../db/client";
import type { TAttachmentFact } from "../core/media";
import { createMediaCapabilities } from "./media";
import { createPreparedMediaLedger, type TPreparedMediaLedger } from "./media/reply-items";
import type { THostAuthorityCapabilities } from "../../plugin-sdk/authority";
import type { TPendingInputMethods } from "./authority";

const MAX_BUFFERED = 500;

/** An attempt's capabilities and the host's own controls of them (never handed to a harness). */
export type TAttemptCapabilities = THostCapabilities & {
  /** Every later call fails closed. */
  close: () => void;
  /** The host's record of reply media a harness returns; refuses media this attempt did not prepare. */
  deliverableMedia: TPreparedMediaLedger["deliverable"];
};

/**
 * Builds the capabilities of one attempt, bound to its response, session and user. `close()`
 * makes every later call fail closed (reports return false, records throw).
 */
export function createHostCapabilities(input: {
  deps: TDeps;
  responseId: string;
  sessionId: string;
  userId: string;
  reportOutputTokens: TReportOutputTokens;
  steering: SteeringDesk;
  isRunLive: () => boolean;
  /** Buffers an event for the attempt's next commit (they commit with the step they belong to). */
  record: (event: TNewEvent) => void;
  /** Commits what the attempt has buffered now. */
  commit: () => Promise<void>;
  /** The session workspace, the run's admitted attachments, and a commit that holds the still-executing run. */
  workspaceDir: string;
  attachments: readonly TAttachmentFact[];
  signal: AbortSignal;
  publish: <T>(write: (tx: Db) => Promise<T>) => Promise<T>;
  /** The authority capabilities (server/host/authority.ts); `isOpen` is false once the attempt settled. */
  authority: (isOpen: () => boolean) => THostAuthorityCapabilities;
  /** The V2 claim and cancellation of the input the run waits on (server/host/authority.ts). */
  pendingInput: (isOpen: () => boolean) => TPendingInputMethods;
}): TAttemptCapabilities {
  let closed = false;
  const prepared = createPreparedMediaLedger();
  const media = createMediaCapabilities({
    db: input.deps.db,
    policy: input.deps.config.media,
    ownerId: input.userId,
    workspaceDir: input.workspaceDir,
    attachments: input.attachments,
    runAs: input.deps.sandbox.runAs ?? null,
    isCurrent: () => !closed && input.isRunLive(),
    signal: input.signal,
    publish: input.publish,
    onPrepared: prepared.add,
  });
  let buffered = 0;
  const closedError = () => new DomainError("conflict", "This attempt has settled; its host capabilities are closed.");
  const flush = async () => {
    if (buffered === 0) return;
    buffered = 0;
    await input.commit();
  };
  return {
    version: 2,
    reportOutputTokens: (n) => !closed && input.reportOutputTokens(n),
    trajectory: {
      recordEvent: (type, data) => {
        if (closed) throw closedError();
        if (!/^[a-z][a-z0-9_.-]{0,63}$/.test(type)) throw new DomainError("invalid_request", "Trajectory event types are 1–64 lowercase letters, digits, dots, dashes or underscores.");
        input.record({ type: `harness.${type}`, data: { sessionId: input.sessionId, ...(boundAndRedact(data) as Record<string, unknown>) }, frame: false });
        if (++buffered >= MAX_BUFFERED) void flush().catch((error: unknown) => input.deps.log.warn({ err: error }, "trajectory flush failed"));
      },
      flush: async () => {
        if (closed) return;
        await flush();
      },
    },
    classifyTerminalOutcome,
    media,
    messageInjectionV2: {
      version: 2,
      isAvailable: () => !closed && input.isRunLive(),
      queueMessage: async (text: string, options: TQueueMessageOptions, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => {
        // A harness's mistake (no assertion, an unknown kind) is refused, never queued unchecked.
        assertInjectionRequest(assertCurrent, authorityKind);
        if (closed) {
          options.onQueueAccepted?.(false);
          options.onQueueSettled?.("rejected");
          return { accepted: false, outcome: "rejected" as const };
        }
        let settledWith: ((outcome: "committed" | "cancelled" | "rejected") => void) | null = null;
        const settledPromise = new Promise<"committed" | "cancelled" | "rejected">((resolve) => {
          settledWith = resolve;
        });
        const queued = await input.steering.queue({
          responseId: input.responseId,
          sessionId: input.sessionId,
          userId: input.userId,
          text,
          via: "system",
          authorityKind,
          assertCurrent,
          onSettled: (outcome) => {
            options.onQueueSettled?.(outcome);
            settledWith?.(outcome);
          },
        });
        const accepted = "id" in queued;
        options.onQueueAccepted?.(accepted);
        if (!accepted) {
          options.onQueueSettled?.("rejected");
          return { accepted, outcome: "rejected" as const };
        }
        if (options.waitForTranscriptCommit === false) return { accepted, outcome: "pending" as const };
        return { accepted, outcome: await settledPromise };
      },
      ...input.pendingInput(() => !closed),
    },
    ...input.authority(() => !closed),
    close: () => {
      closed = true;
    },
    deliverableMedia: prepared.deliverable,
  };
}

/** What a harness receives: the attempt's capabilities without the host's own controls. */
export function harnessCapabilities(capabilities: TAttemptCapabilities): THostCapabilities {
  const { close: _close, deliverableMedia: _deliverable, ...view } = capabilities;
  return view;
}
