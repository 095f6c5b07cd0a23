import type { IncomingMessage, ServerResponse } from "node:http";
import type { TFrame } from "../../core/frames";
import type { TDeps } from "../../host/deps";
import { followFrames } from "../../services/follow-frames";

/**
 * Streams a response's frames as `text/event-stream` (`id` = sequence, so `Last-Event-ID`
 * resumes) until `stopAfter` says so or the client goes away.
 */
export async function streamFrames(
  deps: TDeps,
  req: IncomingMessage,
  res: ServerResponse,
  input: { responseId: string; after: number; stopAfter: (frame: TFrame) => boolean },
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  const abort = new AbortController();
  const onClose = () => abort.abort();
  req.on("close", onClose);
  res.on("close", onClose);
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  try {
    for await (const frame of followFrames(deps, input.responseId, input.after, abort.signal)) {
      res.write(`id: ${frame.sequence}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`);
      if (input.stopAfter(frame)) break;
    }
  } finally {
    clearInterval(heartbeat);
    req.off("close", onClose);
    res.end();
  }
}
