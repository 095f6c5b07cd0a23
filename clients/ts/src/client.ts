/**
 * The Countersign client: `/v1` over `fetch` (Node 20+, browsers, Deno, Bun). `live()` also needs
 * the optional `ws` package.
 *
 *   const cs = new Countersign({ baseUrl: "http://localhost:3000", apiKey });   // or COUNTERSIGN_URL / COUNTERSIGN_API_KEY
 *   const deploy = cs.requireApproval("deploy", async (args: { service: string }) => ship(args.service));
 *   await deploy({ service: "api" });   // request → wait → consume → run (the approver's edit, if any)
 */
import { ApprovalDenied, ApprovalEdited, CountersignError, errorOf } from "./errors.js";
import { LiveConnection } from "./live.js";
import type {
  TApproval,
  TApprovalListItem,
  TApprovalRequest,
  TCreatedEnvelope,
  TCreateResponseBody,
  TDecided,
  TDecisionBody,
  TEnvelope,
  TFrame,
  TQuestionRecord,
  TQuestionRequest,
  TQuestionResolve,
  TQuestionResult,
  TQuestionWait,
  TAnswers,
} from "./types.js";

export type TClientOptions = {
  /** Default: `COUNTERSIGN_URL`, else `http://localhost:3000`. */
  baseUrl?: string;
  /** Default: `COUNTERSIGN_API_KEY`. */
  apiKey?: string;
  fetch?: typeof fetch;
};

/** How `approvals.obtain` and `requireApproval` wait and what they accept. */
export type TObtainOptions = {
  /** Run an approver's edited arguments (default `true`); `false`: throw `ApprovalEdited` instead, run nothing. */
  acceptEdits?: boolean;
  /** How long to wait for a decision (default 15 minutes); still pending then throws `ApprovalDenied` (`status: "pending"`). */
  timeoutMs?: number;
  /** Called with the approval as the create answered it (e.g. to log its id). */
  onRequest?: (approval: TApproval) => void;
};

/** `requireApproval`'s options: the request's fields, `message` and `idempotencyKey` possibly computed from the call's arguments. */
export type TRequireOptions<A> = Omit<TApprovalRequest, "action" | "arguments" | "message" | "idempotencyKey"> &
  TObtainOptions & {
    message?: string | ((args: A) => string);
    /** The same key answers the same approval: a retried call waits for it, or runs its (edited) arguments, never asking twice. */
    idempotencyKey?: string | ((args: A) => string);
  };

/** An approval consumed for this one run: `arguments` are what to run (the approver's edit, if any). */
export type TObtained = TApproval & { status: "approved"; consumed: true; arguments: Record<string, unknown> };

const env = (name: string): string | undefined => (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined;

export class Countersign {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: TClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? env("COUNTERSIGN_URL") ?? "http://localhost:3000").replace(/\/+$/, "");
    const apiKey = options.apiKey ?? env("COUNTERSIGN_API_KEY");
    if (!apiKey) throw new TypeError("An API key is needed: pass apiKey or set COUNTERSIGN_API_KEY.");
    this.apiKey = apiKey;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
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
    /**
     * `POST /v1/approvals`: the approval as `get` shows it. `status` may already be `approved` (grant,
     * policy) or `denied` (reviewer). With an `idempotencyKey` used before, the approval as it is now
     * (after an edit: `edited: true`, the edited `arguments` and their `bindingHash`).
     */
    request: async (body: TApprovalRequest): Promise<TApproval> => (await this.request<TApproval>("POST", "/v1/approvals", body)).body,
    /** `GET /v1/approvals/{id}?wait=MS`: one long poll (the server bounds the wait). */
    get: async (id: string, options: { waitMs?: number } = {}): Promise<TApproval> =>
      (await this.request<TApproval>("GET", `/v1/approvals/${enc(id)}${options.waitMs ? `?wait=${Math.floor(options.waitMs)}` : ""}`)).body,
    /** Long-polls until the approval is decided, expired or `timeoutMs` passes (then it answers `pending`). */
    wait: async (id: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<TApproval> => {
      const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      for (;;) {
        const left = deadline - Date.now();
        const approval = await this.approvals.get(id, { waitMs: Math.max(0, Math.min(left, options.pollMs ?? 60_000)) });
        if (approval.status !== "pending" || deadline - Date.now() <= 0) return approval;
      }
    },
    /** `POST /v1/approvals/{id}/consume`: 200 once; a replay, another hash, expired or not approved throw (409). */
    consume: async (id: string, bindingHash: string): Promise<TApproval> => (await this.request<TApproval>("POST", `/v1/approvals/${enc(id)}/consume`, { bindingHash })).body,
    /**
     * request → wait → consume: the approval, consumed for one run; run its `arguments` (the
     * approver's edit, if any). Throws `ApprovalDenied` (denied, expired, cancelled, still pending
     * after `timeoutMs`), `ApprovalEdited` (edited while `acceptEdits` is false; not consumed), or
     * `CountersignError` (e.g. 409 `already_consumed`: a retry of an operation that already ran).
     */
    obtain: async (request: TApprovalRequest, options: TObtainOptions = {}): Promise<TObtained> => {
      const created = await this.approvals.request(request);
      options.onRequest?.(created);
      const approval = created.status === "pending" ? await this.approvals.wait(created.id, { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }) : created;
      if (approval.status !== "approved") throw new ApprovalDenied(approval);
      if (approval.edited && options.acceptEdits === false) throw new ApprovalEdited(approval);
      return (await this.approvals.consume(approval.id, approval.bindingHash)) as TObtained;
    },
    /** `POST /v1/approvals/{id}`: approve (as asked, edited, with a grant) or deny (with a reply). */
    decide: async (id: string, body: TDecisionBody): Promise<TDecided> => (await this.request<TDecided>("POST", `/v1/approvals/${enc(id)}`, body)).body,
    /** `GET /v1/approvals?status=`: what the caller may see. */
    list: async (status: "pending" | "decided" = "pending"): Promise<TApprovalListItem[]> =>
      (await this.request<{ approvals: TApprovalListItem[] }>("GET", `/v1/approvals?status=${status}`)).body.approvals,
  };

  /**
   * Wraps `fn` so it runs only once a person (or a grant, or the policy) approved the call's
   * arguments as `action`: each call is `approvals.obtain({action, arguments})`, then `fn` with the
   * approved arguments (an approver's edit included, unless `acceptEdits: false`).
   */
  requireApproval<A extends object, R>(action: string, fn: (args: A) => R | Promise<R>, options: TRequireOptions<A> = {}): (args: A) => Promise<Awaited<R>> {
    const { message, idempotencyKey, acceptEdits, timeoutMs, onRequest, ...request } = options;
    return async (args: A): Promise<Awaited<R>> => {
      const text = typeof message === "function" ? message(args) : message;
      const key = typeof idempotencyKey === "function" ? idempotencyKey(args) : idempotencyKey;
      const approved = await this.approvals.obtain(
        { ...request, action, arguments: args as Record<string, unknown>, ...(text === undefined ? {} : { message: text }), ...(key === undefined ? {} : { idempotencyKey: key }) },
        { ...(acceptEdits === undefined ? {} : { acceptEdits }), ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(onRequest ? { onRequest } : {}) },
      );
      return await fn(approved.arguments as A);
    };
  }

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

const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** As the server's follow route: the stream ends at a terminal envelope, not at a `requires_action` boundary. */
const isTerminal = (f: TFrame): boolean => f.type === "response.completed" && f.status !== "requires_action";
