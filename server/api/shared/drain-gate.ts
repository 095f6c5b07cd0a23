/** How long a client is asked to wait before retrying a request a draining replica refused. */
export const DRAIN_RETRY_AFTER_SECONDS = 5;

const DRAINING_DETAIL = "This server is shutting down and takes no new runs or decisions; retry in a few seconds (another replica answers, or this one after its restart). Nothing was applied.";

/**
 * Graceful shutdown's front door. Once a replica drains (SIGTERM), every request that would
 * start or settle something (a new run, a decision, an answer, a steer, any tRPC mutation, a new
 * WebSocket) is refused with 503 and `Retry-After`; reads, streams already open and the runs
 * already executing here go on until the drain window ends. The refusals themselves are written
 * by the transports (server/api/http/drain.ts, the WebSocket's error frame).
 */
export class DrainGate {
  private drainingSince: number | null = null;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  begin(): void {
    this.drainingSince ??= Date.now();
  }

  /** Whether this request would admit work: anything but a read on the API surfaces. */
  refuses(method: string | undefined, path: string): boolean {
    if (!this.draining) return false;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
    return path === "/v1" || path.startsWith("/v1/") || path.startsWith("/api/");
  }

  /** Whether a WebSocket frame of this type would admit work (following a response or closing does not). */
  refusesFrame(type: string): boolean {
    return this.draining && type !== "response.subscribe" && type !== "session.close";
  }

  readonly detail = DRAINING_DETAIL;
}
