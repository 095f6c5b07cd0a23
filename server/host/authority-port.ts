import type { TCredential } from "../core/credential";
import type { TAnswers } from "../core/questions/schema";

/** The run whose pending input a harness claims or cancels, and the check made right before the commit. */
export type TPendingInputTarget = {
  responseId: string;
  sessionId: string;
  /** A question of this run; omitted: the one the run waits on now. */
  questionId?: string;
  /** Checked synchronously inside the claim's transaction, with no await before the claim. */
  assertCurrent: () => boolean;
};
import type { TDeps } from "./deps";
import type { TRunStarter } from "../ports/run-starter";

/**
 * What the authority capabilities need of the services layer (the host never imports services):
 * the composition root (server/app.ts) fills it with server/services/authority-services.ts.
 */
export type TAuthorityServices = {
  /** Creates and starts a run as `ownerId` (the ordinary `/v1/responses` path: agent, input checks, session). */
  spawnRun: (ownerId: string, body: { agent: string; input: unknown; metadata: Record<string, unknown> }, source: TCredential | null) => Promise<{ responseId: string; sessionId: string }>;
  /** Answers a question as `ownerId` with a receipt; `assertCurrent` is checked right before the commit. */
  resolveQuestion: (ownerId: string, input: { id: string; answers: TAnswers; resolutionId: string; assertCurrent: () => boolean }) => Promise<unknown>;
  /**
   * Answers the question the run waits on with a text (claimed) or cancels it, as `ownerId`;
   * `assertCurrent` is checked right before the claim. Null: the run waits on no such question.
   */
  claimPendingInput: (ownerId: string, input: TPendingInputTarget & { text: string; resolutionId: string }) => Promise<{ questionId: string } | null>;
  cancelPendingInput: (ownerId: string, input: TPendingInputTarget & { resolvedBy: string }) => Promise<{ questionId: string } | null>;
  /** Waits for a question's outcome with the receipt of its committed answer (`includeResolutionId`). */
  waitAnswer: (ownerId: string, params: { id: string; timeoutMs: number }) => Promise<{ status: string; resolutionId?: string }>;
};

/** The attempt as the authority capabilities see it (server/host/attempt.ts's Attempt). */
export type TAuthorityAttempt = {
  readonly deps: TDeps;
  readonly response: { id: string; sessionId: string; userId: string; agent: string; sourceCredential?: TCredential | null };
  readonly signal: AbortSignal;
  readonly runtime: { host: TRunStarter; services?: () => TAuthorityServices | undefined };
  /** The session workspace (an exec review's confinement is judged against it). */
  readonly workspaceDir: string;
  step: <T>(key: string, fn: (record: { event: (type: string, data: Record<string, unknown>) => void; frame: (type: string, data: Record<string, unknown>) => void }) => Promise<T>) => Promise<T>;
  commit: () => Promise<unknown>;
  assertNotCancelled: () => void;
};
