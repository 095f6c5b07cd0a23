import type { TTransport } from "./vocabulary";

/** An event to append to a response's trajectory; `frame: true` also makes it a wire frame. */
export type TNewEvent = {
  type: string;
  data: Record<string, unknown>;
  frame: boolean;
  actorUserId?: string | null;
  transport?: TTransport | null;
};

/** A frame as clients receive it over SSE, WebSocket or tRPC. */
export type TFrame = {
  type: string;
  sequence: number;
  responseId: string;
  sessionId: string;
  [key: string]: unknown;
};

/** Builds the wire frame of a stored event. */
export const toFrame = (e: {
  type: string;
  frameSeq: number;
  responseId: string;
  sessionId: string;
  data: Record<string, unknown>;
}): TFrame => ({ ...e.data, type: e.type, sequence: e.frameSeq, responseId: e.responseId, sessionId: e.sessionId });

/** Frames after which a `/v1` SSE stream of an invocation closes. */
export const BOUNDARY_FRAME = "response.completed";
