import { CountersignError } from "./errors.js";
import type { TCreateResponseBody, TLiveFrame, TLiveServerFrame } from "./types.js";

/** What `live()` needs of a WebSocket: the `ws` package's API (Node 20 has no WebSocket that sends headers). */
type TSocket = {
  on(event: "message", listener: (data: { toString(): string }) => void): unknown;
  on(event: "close", listener: (code: number, reason: { toString(): string }) => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
  once(event: "open", listener: () => void): unknown;
  once(event: "error", listener: (error: unknown) => void): unknown;
  send(data: string): void;
  terminate(): void;
};
type TSocketClass = new (url: string, options: { headers: Record<string, string> }) => TSocket;

/** `ws`, an optional peer dependency: loaded only when `live()` is called. */
async function loadWs(): Promise<TSocketClass> {
  const specifier = "ws";
  try {
    const mod = (await import(specifier)) as { default?: TSocketClass; WebSocket?: TSocketClass };
    const WebSocket = mod.WebSocket ?? mod.default;
    if (WebSocket) return WebSocket;
  } catch {}
  throw new CountersignError(0, "ws_missing", "live() needs the ws package (npm install ws): Node's WebSocket cannot send the Authorization header.");
}

/** One `/v1/live` session. Frames go into `frames`; `next(pred)` waits for one. */
export class LiveConnection {
  readonly frames: TLiveFrame[] = [];
  sessionId = "";
  private ws!: TSocket;
  private readonly lastSeen = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private closeInfo: { code: number; reason: string } | null = null;

  private constructor(
    private readonly WebSocket: TSocketClass,
    private readonly wsUrl: string,
    private readonly apiKey: string,
  ) {}

  static async open(wsUrl: string, apiKey: string, sessionId?: string): Promise<LiveConnection> {
    const live = new LiveConnection(await loadWs(), wsUrl, apiKey);
    await live.connect(sessionId);
    return live;
  }

  private async connect(sessionId?: string): Promise<void> {
    const ws = new this.WebSocket(`${this.wsUrl}/v1/live`, { headers: { authorization: `Bearer ${this.apiKey}` } });
    this.ws = ws;
    this.closeInfo = null;
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as TLiveFrame;
      if ("sequence" in frame && typeof frame.sequence === "number" && "responseId" in frame) {
        const seen = this.lastSeen.get(frame.responseId) ?? -1;
        // A resumed subscription never repeats a frame.
        if (frame.sequence <= seen) return;
        this.lastSeen.set(frame.responseId, frame.sequence);
      }
      this.frames.push(frame);
      for (const wake of this.waiters) wake();
    });
    ws.on("close", (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      for (const wake of this.waiters) wake();
    });
    ws.on("error", () => {});
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    this.send({ type: "connect", ...(sessionId ? { sessionId } : {}) });
    const connected = (await this.next((f) => f.type === "session.connected", { from: this.frames.length })) as Extract<TLiveServerFrame, { type: "session.connected" }>;
    this.sessionId = connected.sessionId;
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** `response.create` on this session. */
  create(input: TCreateResponseBody["input"], extra: { requestId?: string; agent?: string; metadata?: Record<string, unknown> } = {}): void {
    this.send({ type: "response.create", input, ...extra });
  }

  /** Follows a response from `after` (default: the last sequence this connection saw of it). */
  subscribe(responseId: string, after?: number): void {
    this.send({ type: "response.subscribe", responseId, after: after ?? this.lastSeen.get(responseId) ?? -1 });
  }

  decide(responseId: string, approvalId: string, decision: "approve" | "deny", extra: { message?: string } = {}): void {
    this.send({ type: "approval.decision", responseId, approvalId, decision, ...extra });
  }

  /** Reconnects (same session) and re-subscribes every response it followed from its last seen sequence. */
  async resume(): Promise<void> {
    if (!this.closeInfo) this.ws.terminate();
    await this.connect(this.sessionId);
    for (const [responseId, seq] of this.lastSeen) this.subscribe(responseId, seq);
  }

  /** The first frame (from index `from`) matching `pred`; rejects when the socket closes or `timeoutMs` passes. */
  async next(pred: (f: TLiveFrame) => boolean, options: { from?: number; timeoutMs?: number } = {}): Promise<TLiveFrame> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    let index = options.from ?? 0;
    for (;;) {
      for (; index < this.frames.length; index++) {
        const f = this.frames[index] as TLiveFrame;
        if (pred(f)) return f;
      }
      if (this.closeInfo) throw new CountersignError(0, "closed", `The socket closed (${this.closeInfo.code} ${this.closeInfo.reason}).`);
      const left = deadline - Date.now();
      if (left <= 0) throw new CountersignError(0, "timeout", "No matching frame arrived in time.");
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  close(): void {
    if (!this.closeInfo) this.send({ type: "session.close" });
  }

  /** Drops the connection without saying goodbye (as a network failure would). */
  drop(): void {
    this.ws.terminate();
  }
}
