import { EventEmitter } from "node:events";
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

export const isHint = (f: TFrame | TFrameHint): f is TFrameHint => "hint" in f;

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
};

/** The in-process bus used with PGlite and by a single server. */
export function createLocalBus(): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const on = <A extends unknown[]>(name: string, listener: (...args: A) => void) => {
    const wrapped = (...args: unknown[]) => {
      // An observer that throws must never break the publisher or other observers.
      try {
        listener(...(args as A));
      } catch {}
    };
    emitter.on(name, wrapped);
    return () => {
      emitter.off(name, wrapped);
    };
  };
  return {
    publishFrames: (responseId, frames) => {
      for (const frame of frames) emitter.emit(`frames:${responseId}`, frame);
    },
    subscribeFrames: (responseId, listener) => on(`frames:${responseId}`, listener),
    deliverHint: (hint) => emitter.emit(`frames:${hint.responseId}`, hint),
    publishWake: (responseId, reason) => emitter.emit("wake", responseId, reason),
    subscribeWake: (listener) => on("wake", listener),
    publishInbox: (change) => emitter.emit("inbox", change),
    subscribeInbox: (listener) => on("inbox", listener),
    publishQuestion: (change) => emitter.emit("question", change),
    subscribeQuestion: (listener) => on("question", listener),
    publishCredentials: (change) => emitter.emit("credentials", change),
    subscribeCredentials: (listener) => on("credentials", listener),
  };
}
