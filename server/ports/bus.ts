/**
 * The event bus as its users see it (types only): what a transaction announces and what
 * subscribers receive. The implementations are server/host/bus.ts (one process) and
 * server/host/pg-bus.ts (replicas on one PostgreSQL).
 */
import type { TFrame } from "../core/frames";

/** What the console inbox listens to: something changed on these responses. */
export type TInboxChange = { kind: "approval" | "client_tool" | "response" | "question"; responseId: string | null; id?: string };

/** A question changed state; `resolutionId` travels only on this internal bus, never to clients. */
export type TQuestionChange = { questionId: string; status: string; resolutionId?: string };

/**
 * A user's credentials changed (a key revoked, the role changed, disabled, deleted, signed out):
 * open connections of that user re-check theirs against the tables. A hint, never the verdict.
 */
export type TCredentialChange = { userId: string };

/** Another replica stored frames up to `sequence`: read them from the table. */
export type TFrameHint = { hint: true; responseId: string; sequence: number };

/** One change a transaction announces: delivered in this process after the commit, told to peers by the transaction itself. */
export type TAnnouncement =
  | { k: "frames"; responseId: string; frames: readonly TFrame[] }
  | { k: "wake"; responseId: string; reason: "resume" | "cancel" }
  | { k: "inbox"; change: TInboxChange }
  | { k: "question"; change: TQuestionChange }
  | { k: "credentials"; change: TCredentialChange };

/**
 * Wake-ups and live frames. In one process this is an EventEmitter; frames are always stored
 * before they are published, so a subscriber that misses one can backfill from the table.
 * Across replicas (PostgreSQL) frames arrive as hints and subscribers read the table.
 */
export type EventBus = {
  publishFrames: (responseId: string, frames: readonly TFrame[]) => void;
  subscribeFrames: (responseId: string, listener: (frame: TFrame | TFrameHint) => void) => () => void;
  /** Delivers a hint from another replica to this process's subscribers. */
  deliverHint?: (hint: TFrameHint) => void;
  /** When set, subscribers also re-read the table this often (a missed notification cannot stall them). */
  pollMs?: number;
  /** A decision, submission or cancel committed for this response: the owner should act. */
  publishWake: (responseId: string, reason: "resume" | "cancel") => void;
  subscribeWake: (listener: (responseId: string, reason: "resume" | "cancel") => void) => () => void;
  publishInbox: (change: TInboxChange) => void;
  subscribeInbox: (listener: (change: TInboxChange) => void) => () => void;
  publishQuestion: (change: TQuestionChange) => void;
  subscribeQuestion: (listener: (change: TQuestionChange) => void) => () => void;
  publishCredentials: (change: TCredentialChange) => void;
  subscribeCredentials: (listener: (change: TCredentialChange) => void) => () => void;
  /**
   * The latest boundary frame (`response.completed`) this process published for a response, if it
   * came after `afterSequence`: a waiter that subscribed a moment too late finds it here without
   * reading the table. Bounded; null means "not seen here", never "not stored".
   */
  recentBoundary: (responseId: string, afterSequence: number) => TFrame | null;
  /** Delivers announcements to this process's subscribers only (after their transaction committed). */
  deliverLocally: (batch: readonly TAnnouncement[]) => void;
  /**
   * With peers (replicas on one PostgreSQL): the NOTIFY payloads that tell them about `batch`,
   * sent by the announcing transaction itself so a state change costs no commit of its own.
   */
  peerPayloads?: (batch: readonly TAnnouncement[]) => string[];
};
