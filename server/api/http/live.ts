import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { TCredential } from "../../auth/credential-status";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { TFrame } from "../../core/frames";
import { readScope } from "../../core/read-scope";
import { mintSessionId } from "../../core/session-ids";
import { cancelResponse } from "../../services/cancel-response";
import { decideApproval } from "../../services/decide-approval";
import { followFrames, isTerminalFrame } from "../../services/follow-frames";
import { invokeResponse } from "../../services/invoke-response";
import { maxBodyBytesFor } from "../../core/media";
import { attachmentDataLength } from "./body";
import { MAX_BODY_BYTES } from "../shared/request-body";
import { viewResponse } from "../../services/read/responses";
import { assertOwnSession } from "../../services/read/sessions";
import { steerResponse } from "../../services/steer-response";
import { submitClientToolResult } from "../../services/submit-client-tool-result";
import { describeIssues } from "./body";
import { describeStorableProblem, storableJsonProblem } from "../shared/request-body";
import type { TTransportDeps } from "../shared/deps";
import { DRAIN_RETRY_AFTER_SECONDS } from "../shared/drain-gate";
import { toDomainError } from "../shared/errors";
import { isSameOriginRequest } from "../shared/same-origin";
import { identify } from "../shared/identify";
import { type TLiveServerFrame, ZLiveClientFrame, ZLiveConnect } from "./live-frames";
import type { TOpenConnection } from "../shared/open-connections";

const MAX_FRAMES = 1024;

/** Close codes once the socket's credential no longer holds: gone (revoked, signed out, disabled, deleted) or a changed role. */
const REVOKED_CLOSE = { unauthenticated: 4401, forbidden: 4403 } as const;
/** "Try again later": the user holds as many open streams as allowed. */
const TOO_MANY_STREAMS_CLOSE = 1013;

/** A close reason fits in 123 bytes. */
const closeReason = (text: string): string => (Buffer.byteLength(text) <= 123 ? text : `${Buffer.from(text).subarray(0, 120).toString("utf8").replace(/\uFFFD+$/, "")}...`);

/**
 * A ping this often keeps an idle socket alive through proxies (many close a silent connection
 * after 60 s) during a long approval wait; a peer that has not answered the previous ping by the
 * next one is gone and its socket is ended.
 */
export const LIVE_PING_MS = 25_000;

/** `frames`: a per-connection admitter (0 = go, else seconds to wait), e.g. the rate limiter's; `pingMs`: the keep-alive period. */
export type TLiveOptions = { frames?: (req: IncomingMessage, url: URL) => () => number; pingMs?: number };

/** `WS /v1/live`: one session per socket; runs resume on the socket that decides. */
export function createLiveServer(deps: TTransportDeps, options: TLiveOptions = {}) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBodyBytesFor(deps.config.media) });
  return {
    handleUpgrade: async (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => {
      const identity = await identify(deps, deps.auth, req, url).catch(() => null);
      // Browsers always send Origin on a WebSocket; a malformed or `null` one is cross-origin, never a crash.
      const crossOrigin = identity?.via === "cookie" && typeof req.headers.origin === "string" && !isSameOriginRequest(req, deps.publicUrl);
      const admitFrame = options.frames?.(req, url) ?? (() => 0);
      try {
        wss.handleUpgrade(req, socket, head, (ws) => {
          // A protocol error (frame over maxPayload → 1009, invalid UTF-8 → 1007) is emitted as
          // 'error' on the socket; without a listener it would be thrown and end the process.
          ws.on("error", (error) => deps.log.debug({ err: error }, "WebSocket protocol error; the socket is closed"));
          if (!identity) return ws.close(4401, "Authentication required");
          if (crossOrigin) return ws.close(4403, "Cross-origin WebSocket with a session cookie");
          let connection: TOpenConnection;
          try {
            connection = deps.connections.open(identity.credential);
          } catch (error) {
            const refusal = toDomainError(error);
            return ws.close(TOO_MANY_STREAMS_CLOSE, closeReason(refusal.message));
          }
          new LiveConnection(deps, ws, identity.actor, connection, admitFrame, options.pingMs ?? LIVE_PING_MS, identity.credential);
        });
      } catch (error) {
        deps.log.warn({ err: error }, "WebSocket upgrade failed");
        socket.destroy();
      }
    },
    close: () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

class LiveConnection {
  private sessionId: string | null = null;
  private frames = 0;
  private followed = new Map<string, AbortController>();
  private requestIds = new Map<string, string>();
  private inbox: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: TTransportDeps,
    private readonly ws: WebSocket,
    private readonly actor: TActor,
    private readonly connection: TOpenConnection,
    private readonly admitFrame: () => number = () => 0,
    pingMs = LIVE_PING_MS,
    /** What the socket was admitted with: the source of the runs it starts. */
    private readonly credential: TCredential | null = null,
  ) {
    let answered = true;
    ws.on("pong", () => {
      answered = true;
    });
    const pinger = setInterval(() => {
      if (!answered) return ws.terminate();
      answered = false;
      ws.ping();
    }, pingMs);
    pinger.unref();
    // Frames are handled one at a time, in the order they arrived.
    ws.on("message", (data, isBinary) => {
      this.inbox = this.inbox.then(() => this.onMessage(data.toString(), isBinary)).catch(() => {});
    });
    ws.on("close", () => {
      clearInterval(pinger);
      for (const abort of this.followed.values()) abort.abort();
      connection.release();
    });
    // The credential changed (announced, found by the periodic re-check, or by a frame's own check).
    const revoke = () => {
      const refusal = toDomainError(connection.signal.reason);
      for (const abort of this.followed.values()) abort.abort();
      ws.close(refusal.code === "forbidden" ? REVOKED_CLOSE.forbidden : REVOKED_CLOSE.unauthenticated, closeReason(refusal.message));
    };
    if (connection.signal.aborted) revoke();
    else connection.signal.addEventListener("abort", revoke, { once: true });
  }

  private send(frame: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private sendError(error: unknown, extra: { responseId?: string; requestId?: string; retryAfter?: number } = {}): void {
    const e = toDomainError(error);
    this.send({ type: "error", code: e.code, detail: e.message, error: { code: e.code, message: e.message }, ...extra } satisfies TLiveServerFrame);
  }

  private async onMessage(text: string, isBinary: boolean): Promise<void> {
    if (++this.frames > MAX_FRAMES) return this.ws.close(1008, "Too many frames on one connection");
    const wait = this.admitFrame();
    if (wait > 0) return this.sendError(new DomainError("rate_limited", `Too many frames; this frame was not handled. Retry after ${wait} s.`), { retryAfter: wait });
    let raw: unknown;
    try {
      raw = isBinary ? undefined : JSON.parse(text);
    } catch {
      raw = undefined;
    }
    // Only attachment data may take a frame past 1 MiB; anything else that large ends the socket as the protocol limit would.
    if (Buffer.byteLength(text) > MAX_BODY_BYTES && Buffer.byteLength(text) - attachmentDataLength((raw as { attachments?: unknown } | undefined)?.attachments) > MAX_BODY_BYTES) {
      return this.ws.close(1009, "Message too big");
    }
    const unstorable = raw === undefined ? null : storableJsonProblem(raw);
    if (unstorable) return this.sendError(new DomainError("invalid_request", describeStorableProblem(unstorable, "The frame")));
    // Nothing is read or done for a credential that no longer holds, even before the close went out.
    try {
      await this.connection.assertCurrent();
    } catch (error) {
      return this.sendError(error);
    }
    if (this.sessionId === null) return this.onConnect(raw);
    const parsed = ZLiveClientFrame.safeParse(raw);
    if (!parsed.success) {
      return this.sendError(new DomainError("invalid_request", raw === undefined ? "Frames must be JSON objects." : `Invalid frame: ${describeIssues(parsed.error)}.`));
    }
    const frame = parsed.data;
    if (this.deps.drain.refusesFrame(frame.type)) {
      return this.sendError(new DomainError("capacity", this.deps.drain.detail), { retryAfter: DRAIN_RETRY_AFTER_SECONDS, ...("requestId" in frame && typeof frame.requestId === "string" ? { requestId: frame.requestId } : {}) });
    }
    try {
      if (frame.type === "session.close") return this.ws.close(1000, "Session closed");
      if (frame.type === "response.create") {
        const invoked = await invokeResponse(
          this.deps,
          this.actor,
          { input: frame.input, sessionId: this.sessionId, metadata: frame.metadata, agent: frame.agent, attachments: frame.attachments },
          { via: "websocket", isSourceCurrent: () => this.ws.readyState === this.ws.OPEN, credential: this.credential },
        );
        if (frame.requestId) this.requestIds.set(invoked.responseId, frame.requestId);
        this.follow(invoked.responseId, invoked.afterSequence === 0 ? -1 : invoked.afterSequence);
      } else if (frame.type === "response.cancel") {
        const cancelled = await cancelResponse(this.deps, this.actor, { responseId: frame.responseId, via: "websocket" });
        this.follow(frame.responseId, cancelled.sequence - 1);
      } else if (frame.type === "response.subscribe") {
        // The same check as every other transport's "follow this response"; a refusal is an error frame.
        await viewResponse(this.deps, readScope(this.actor), frame.responseId);
        this.follow(frame.responseId, frame.after ?? -1);
      } else if (frame.type === "response.steer") {
        // Steering from a socket is source-bound: if the socket closes before dispatch, the message is revoked.
        const ws = this.ws;
        const steered = await steerResponse(this.deps, this.actor, { responseId: frame.responseId, text: frame.text, via: "websocket", authorityKind: "source-bound", assertCurrent: () => ws.readyState === ws.OPEN });
        this.follow(frame.responseId, steered.sequence - 1);
      } else if (frame.type === "approval.decision") {
        const { type: _type, responseId, ...decision } = frame;
        const decided = await decideApproval(this.deps, this.actor, { ...decision, via: "websocket", expectedResponseId: responseId });
        if (decided.settled) this.follow(decided.responseId, decided.resolvedSequence - 1);
        else {
          // One vote of a quorum: only this socket hears of it (not a stored frame); the run keeps waiting.
          const { approvalId, sessionId, approvals, requiredApprovals } = decided;
          this.send({ type: "approval.voted", responseId, sessionId, approvalId, decision: decided.decision, status: "pending", approvals, requiredApprovals } satisfies TLiveServerFrame);
        }
      } else {
        const submitted = await submitClientToolResult(this.deps, this.actor, { requestId: frame.requestId, output: frame.output, via: "websocket" });
        this.follow(submitted.responseId, submitted.resultSequence - 1);
      }
    } catch (error) {
      // Errors carry what the client named, so it can tell which of its frames failed.
      const ids =
        "responseId" in frame
          ? { responseId: frame.responseId }
          : frame.type === "client_tool.result" || (frame.type === "response.create" && frame.requestId)
            ? { requestId: frame.requestId }
            : {};
      this.sendError(error, ids);
    }
  }

  private async onConnect(raw: unknown): Promise<void> {
    const parsed = ZLiveConnect.safeParse(raw);
    if (!parsed.success) {
      this.sendError(new DomainError("invalid_request", 'The first frame must be {"type":"connect","sessionId"?}.'));
      return this.ws.close(1008, "Expected a connect frame");
    }
    try {
      const requested = parsed.data.sessionId;
      if (requested) {
        // A session id minted for this user whose first run has not happened yet is still its own.
        await assertOwnSession(this.deps, this.actor, requested);
        this.sessionId = requested;
      } else {
        // No row and no workspace until the first response.create: a bare connect costs nothing to store.
        this.sessionId = mintSessionId(this.deps.secretKey, this.actor.userId);
      }
      this.send({ type: "session.connected", sessionId: this.sessionId } satisfies TLiveServerFrame);
    } catch (error) {
      this.sendError(error);
      this.ws.close(1008, "Unknown session");
    }
  }

  /** Forwards a response's frames to this socket, once per response, until its terminal frame. */
  private follow(responseId: string, after: number): void {
    if (this.followed.has(responseId)) return;
    const abort = new AbortController();
    this.followed.set(responseId, abort);
    void (async () => {
      let skipNextBoundary = false;
      try {
        for await (const frame of followFrames(this.deps, responseId, after, abort.signal)) {
          // On /v1/live a client tool waits for `client_tool.result` on the socket: no requires_action frame.
          if (frame.type === "client_tool.requested") skipNextBoundary = true;
          else if (skipNextBoundary && frame.type === "response.completed" && frame.status === "requires_action") {
            skipNextBoundary = false;
            continue;
          }
          this.send(this.withRequestId(frame));
          if (isTerminalFrame(frame)) break;
        }
      } catch (error) {
        this.deps.log.error({ err: error, responseId }, "live follow failed");
      } finally {
        this.followed.delete(responseId);
      }
    })();
  }

  private withRequestId(frame: TFrame): TFrame {
    const requestId = this.requestIds.get(frame.responseId);
    return requestId ? { ...frame, requestId } : frame;
  }
}
