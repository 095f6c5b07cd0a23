/**
 * A TypeScript client of Countersign's `/v1` API, typed from the very zod schemas the server
 * validates with (type-only imports: nothing of the server is loaded at run time). Needs `fetch`
 * (Node 18+ or a browser) and, for `live()`, the `ws` package in Node.
 *
 *   const cs = new Countersign({ baseUrl: "http://localhost:3000", apiKey });
 *   const approval = await cs.approvals.request({ action: "exec", arguments: { command: "make deploy" } });
 *   const decided = await cs.approvals.wait(approval.id);
 *   if (decided.status === "approved") { await cs.approvals.consume(decided.id, decided.bindingHash); run(decided.arguments); }
 */
import WebSocket from "ws";
import type { z } from "zod";
import type { ZDecisionBody } from "../../server/core/decision";
import type { TEnvelope } from "../../server/core/envelope";
import type { TStreamFrame } from "../../server/core/wire-frames";
import type { TLiveServerFrame } from "../../server/api/http/live-frames";
import type { ZApprovalList } from "../../server/api/http/external-approvals";
import type { ZCreatedEnvelope, ZCreateResponseBody, ZDecided } from "../../server/api/http/v1-schemas";
import type { TExternalApproval, TExternalApprovalBody, ZExternalApprovalCreated } from "../../server/services/external-approvals";
import type { ZRequestParams } from "../../server/services/questions/request-question";
import type { ZResolveParams } from "../../server/services/questions/resolve-question";
import type { ZWaitParams } from "../../server/services/questions/wait-answer";
import type { TQuestionRecord } from "../../server/core/questions/record";
import type { TAnswers } from "../../server/core/questions/schema";

export type TCreateResponseBody = z.input<typeof ZCreateResponseBody>;
export type TCreatedEnvelope = z.output<typeof ZCreatedEnvelope>;
export type TDecisionBody = z.input<typeof ZDecisionBody>;
export type TDecided = z.output<typeof ZDecided>;
export type TApprovalRequest = TExternalApprovalBody;
export type TApprovalCreated = z.output<typeof ZExternalApprovalCreated>;
export type TApproval = TExternalApproval;
export type TApprovalListItem = z.output<typeof ZApprovalList>["approvals"][number];
export type TFrame = TStreamFrame;
export type TLiveFrame = TStreamFrame | TLiveServerFrame;
export type TQuestionRequest = z.input<typeof ZRequestParams>;
export type TQuestionWait = z.input<typeof ZWaitParams>;
export type TQuestionResolve = z.input<typeof ZResolveParams>;
export type TQuestionResult = { status: "pending" } | { status: "answered"; answers: TAnswers; resolutionId?: string } | { status: "cancelled" } | { status: "expired" };

/** A `/v1` error: the status and the contract's `{detail, code}` (or a gateway error's reason). */
export class CountersignError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = "CountersignError";
  }
}

export type TClientOptions = { baseUrl: string; apiKey: string; fetch?: typeof fetch };

export class Countersign {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: TClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** One request; a non-2xx answer throws `CountersignError`. */
  async request<T>(method: string, path: string, body?: unknown, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<{ status: number; body: T }> {
    const res = await this.raw(method, path, body, init);
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (!res.ok) throw errorOf(res.status, parsed);
    return { status: res.status, body: parsed as T };
  }

  private raw(method: string, path: string, body?: unknown, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    return this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.apiKey}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: init.signal,
    });
  }

  /** Hosted runs: invoke, read, follow (SSE with resume), cancel, steer. */
  readonly responses = {
    /** `POST /v1/responses`: the envelope at the first boundary. */
    create: async (body: Omit<TCreateResponseBody, "stream">): Promise<TCreatedEnvelope> => (await this.request<TCreatedEnvelope>("POST", "/v1/responses", body)).body,
    /** `GET /v1/responses/{id}`. */
    get: async (id: string, sessionId: string): Promise<TEnvelope> => (await this.request<TEnvelope>("GET", `/v1/responses/${enc(id)}?sessionId=${enc(sessionId)}`)).body,
    cancel: async (id: string, reason?: string): Promise<TEnvelope> => (await this.request<TEnvelope>("POST", `/v1/responses/${enc(id)}/cancel`, reason === undefined ? {} : { reason })).body,
    steer: async (id: string, text: string) => (await this.request<{ id: string; status: "queued"; sequence: number }>("POST", `/v1/responses/${enc(id)}/steer`, { text })).body,
    /** `POST /v1/responses` with `stream: true`: the frames as they come, until `response.completed`. */
    stream: (body: Omit<TCreateResponseBody, "stream">, options: { signal?: AbortSignal } = {}): AsyncGenerator<TFrame> =>
      this.sse(() => this.raw("POST", "/v1/responses", { ...body, stream: true }, { headers: { accept: "text/event-stream" }, signal: options.signal })),
    /**
     * `GET /v1/responses/{id}/events`: replays the frames after `after` and follows live ones until a
     * terminal frame. A dropped connection is resumed with `Last-Event-ID` (the last sequence seen),
     * so no frame is lost or seen twice.
     */
    follow: (id: string, sessionId: string, options: { after?: number; signal?: AbortSignal; retries?: number } = {}): AsyncGenerator<TFrame> => this.follow(id, sessionId, options),
  };

  private async *follow(id: string, sessionId: string, options: { after?: number; signal?: AbortSignal; retries?: number }): AsyncGenerator<TFrame> {
    let last = options.after ?? -1;
    let retries = options.retries ?? 5;
    for (;;) {
      let terminal = false;
      try {
        const open = () => this.raw("GET", `/v1/responses/${enc(id)}/events?sessionId=${enc(sessionId)}`, undefined, { headers: { accept: "text/event-stream", "last-event-id": String(last) }, signal: options.signal });
        for await (const frame of this.sse(open)) {
          last = frame.sequence;
          yield frame;
          if (isTerminal(frame)) terminal = true;
        }
        if (terminal) return;
      } catch (error) {
        if (error instanceof CountersignError || options.signal?.aborted || retries <= 0) throw error;
      }
      if (terminal) return;
      if (retries-- <= 0) throw new CountersignError(0, "stream_ended", "The event stream ended before a terminal frame.");
      await sleep(200);
    }
  }

  private async *sse(open: () => Promise<Response>): AsyncGenerator<TFrame> {
    const res = await open();
    if (!res.ok) {
      const text = await res.text();
      throw errorOf(res.status, text ? (JSON.parse(text) as unknown) : null);
    }
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (data) yield JSON.parse(data) as TFrame;
          cut = buffer.indexOf("\n\n");
        }
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  /** Approvals: of hosted runs (decide, list) and external ones an agent running elsewhere asks for. */
  readonly approvals = {
    /** `POST /v1/approvals`: `status` may already be `approved` (grant, policy) or `denied` (reviewer). */
    request: async (body: TApprovalRequest): Promise<TApprovalCreated> => (await this.request<TApprovalCreated>("POST", "/v1/approvals", body)).body,
    /** `GET /v1/approvals/{id}?wait=MS`: one long poll (the server bounds the wait). */
    get: async (id: string, options: { waitMs?: number } = {}): Promise<TApproval> =>
      (await this.request<TApproval>("GET", `/v1/approvals/${enc(id)}${options.waitMs ? `?wait=${Math.floor(options.waitMs)}` : ""}`)).body,
    /** Long-polls until the approval is decided, expired or `timeoutMs` passes (then it answers `pending`). */
    wait: async (id: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<TApproval> => {
      const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
      for (;;) {
        const left = deadline - Date.now();
        const approval = await this.approvals.get(id, { waitMs: Math.max(0, Math.min(left, options.pollMs ?? 60_000)) });
        if (approval.status !== "pending" || deadline - Date.now() <= 0) return approval;
      }
    },
    /** `POST /v1/approvals/{id}/consume`: 200 once; a replay, another hash, expired or not approved throw (409). */
    consume: async (id: string, bindingHash: string): Promise<TApproval> => (await this.request<TApproval>("POST", `/v1/approvals/${enc(id)}/consume`, { bindingHash })).body,
    /** `POST /v1/approvals/{id}`: approve (as asked, edited, with a grant) or deny (with a reply). */
    decide: async (id: string, body: TDecisionBody): Promise<TDecided> => (await this.request<TDecided>("POST", `/v1/approvals/${enc(id)}`, body)).body,
    /** `GET /v1/approvals?status=`: what the caller may see. */
    list: async (status: "pending" | "decided" = "pending"): Promise<TApprovalListItem[]> =>
      (await this.request<z.output<typeof ZApprovalList>>("GET", `/v1/approvals?status=${status}`)).body.approvals,
  };

  /** Questions through the Gateway methods (`POST /v1/gateway/question.*`). */
  readonly questions = {
    request: (params: TQuestionRequest) => this.gateway<{ id: string; expiresAtMs: number }>("question.request", params),
    waitAnswer: (params: TQuestionWait) => this.gateway<TQuestionResult>("question.waitAnswer", params),
    resolve: (params: TQuestionResolve) => this.gateway<{ status: "answered"; answers: TAnswers } | { status: "cancelled" }>("question.resolve", params),
    get: async (id: string): Promise<TQuestionRecord> => (await this.gateway<{ question: TQuestionRecord }>("question.get", { id })).question,
    list: async (): Promise<TQuestionRecord[]> => (await this.gateway<{ questions: TQuestionRecord[] }>("question.list", {})).questions,
    /** Asks and waits for the answer (long polls of at most 60 s until `timeoutMs`). */
    ask: async (params: TQuestionRequest, options: { timeoutMs?: number } = {}): Promise<TQuestionResult> => {
      const { id } = await this.questions.request(params);
      const deadline = Date.now() + (options.timeoutMs ?? params.timeoutMs ?? 10 * 60_000);
      for (;;) {
        const left = deadline - Date.now();
        const result = await this.questions.waitAnswer({ id, timeoutMs: Math.max(1000, Math.min(60_000, left)) });
        if (result.status !== "pending" || deadline - Date.now() <= 0) return result;
      }
    },
  };

  private async gateway<T>(method: string, params: unknown): Promise<T> {
    const res = await this.raw("POST", `/v1/gateway/${method}`, params);
    const body = (await res.json()) as { ok: true; payload: T } | { ok: false; error: { code: string; message: string; details?: { reason?: string } } } | { detail: string; code: string };
    if ("ok" in body && body.ok) return body.payload;
    if ("ok" in body) throw new CountersignError(res.status, body.error.details?.reason ?? body.error.code, body.error.message);
    throw errorOf(res.status, body);
  }

  /** A `/v1/live` WebSocket (Node, `ws`), with `resume()` to reconnect and follow each response from the last sequence seen. */
  live(options: { sessionId?: string } = {}): Promise<LiveConnection> {
    return LiveConnection.open(this.baseUrl.replace(/^http/, "ws"), this.apiKey, options.sessionId);
  }
}

/** One `/v1/live` session. Frames go to `onFrame` listeners and into `frames`; `next(pred)` waits for one. */
export class LiveConnection {
  readonly frames: TLiveFrame[] = [];
  sessionId = "";
  private ws!: WebSocket;
  private readonly lastSeen = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private closeInfo: { code: number; reason: string } | null = null;

  private constructor(
    private readonly wsUrl: string,
    private readonly apiKey: string,
  ) {}

  static async open(wsUrl: string, apiKey: string, sessionId?: string): Promise<LiveConnection> {
    const live = new LiveConnection(wsUrl, apiKey);
    await live.connect(sessionId);
    return live;
  }

  private async connect(sessionId?: string): Promise<void> {
    const ws = new WebSocket(`${this.wsUrl}/v1/live`, { headers: { authorization: `Bearer ${this.apiKey}` } });
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

const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** As the server's follow route: the stream ends at a terminal envelope, not at a `requires_action` boundary. */
const isTerminal = (f: TFrame): boolean => f.type === "response.completed" && f.status !== "requires_action";

function errorOf(status: number, body: unknown): CountersignError {
  const b = (body ?? {}) as { detail?: unknown; code?: unknown };
  return new CountersignError(status, typeof b.code === "string" ? b.code : "http_error", typeof b.detail === "string" ? b.detail : `HTTP ${status}`);
}
