import type { IncomingMessage, ServerResponse } from "node:http";
import type { TFrame } from "../../core/frames";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { followResponse } from "../../services/read/responses";
import { encodedOnce } from "../shared/encoded-once";
import type { TOpenConnection } from "../shared/open-connections";

/** A frame's SSE event, encoded once for every stream that sends it (frames are never changed once published). */
const eventText = encodedOnce((frame: TFrame) => `id: ${frame.sequence}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`);

/**
 * Streams the frames of a response `scope` may follow (else a 404 before any header) as `text/event-stream` (`id` = sequence, so `Last-Event-ID`
 * resumes) until `stopAfter` says so, the client goes away, or the credential the stream was
 * opened with no longer holds (the stream then ends after a comment saying why).
 */
export async function streamFrames(
  deps: TDeps,
  req: IncomingMessage,
  res: ServerResponse,
  input: { scope: TReadScope; responseId: string; sessionId?: string; after: number; stopAfter: (frame: TFrame) => boolean; connection: TOpenConnection },
): Promise<void> {
  const abort = new AbortController();
  const frames = await followResponse(deps, input.scope, input, abort.signal);
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  const onClose = () => abort.abort();
  req.on("close", onClose);
  res.on("close", onClose);
  const revoked = input.connection.signal;
  const onRevoked = () => {
    res.write(`: ${revoked.reason instanceof Error ? revoked.reason.message : "credential revoked"}\n\n`);
    abort.abort();
  };
  if (revoked.aborted) onRevoked();
  else revoked.addEventListener("abort", onRevoked, { once: true });
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  try {
    for await (const frame of frames) {
      // Nothing more after a revocation, even a frame read in the same batch.
      if (abort.signal.aborted) break;
      res.write(eventText(frame));
      if (input.stopAfter(frame)) break;
    }
  } finally {
    clearInterval(heartbeat);
    req.off("close", onClose);
    revoked.removeEventListener("abort", onRevoked);
    res.end();
  }
}
