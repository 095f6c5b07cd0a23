import { EventEmitter } from "node:events";
import type { TFrame } from "../core/frames";
import type { EventBus, TFrameHint } from "../ports/bus";

export const isHint = (f: TFrame | TFrameHint): f is TFrameHint => "hint" in f;

/** The channel replicas notify each other on. */
export const PEER_CHANNEL = "countersign";

const RECENT_BOUNDARIES = 4096;

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
  const boundaries = new Map<string, TFrame>();
  const publishFrames = (responseId: string, frames: readonly TFrame[]) => {
    for (const frame of frames) {
      if (frame.type === "response.completed") {
        boundaries.delete(responseId);
        boundaries.set(responseId, frame);
        if (boundaries.size > RECENT_BOUNDARIES) boundaries.delete(boundaries.keys().next().value as string);
      }
      emitter.emit(`frames:${responseId}`, frame);
    }
  };
  return {
    publishFrames,
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
    recentBoundary: (responseId, afterSequence) => {
      const frame = boundaries.get(responseId);
      return frame && frame.sequence > afterSequence ? frame : null;
    },
    deliverLocally: (batch) => {
      for (const a of batch) {
        if (a.k === "frames") publishFrames(a.responseId, a.frames);
        else if (a.k === "wake") emitter.emit("wake", a.responseId, a.reason);
        else if (a.k === "inbox") emitter.emit("inbox", a.change);
        else if (a.k === "question") emitter.emit("question", a.change);
        else emitter.emit("credentials", a.change);
      }
    },
  };
}
