import { type CallToolResult, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_MCP_TIMEOUT_MS, type TMcpServerConfig } from "./config";
import { errorText, McpConnection } from "./connection";
import type { Logger } from "pino";
import { answerElicitation, type TElicitCall } from "./elicitation";

/** One tool call on an MCP server, with the run it belongs to (for elicitations and the trajectory). */
export type TMcpCall = TElicitCall & { label: string; tool: string; responseId: string; log: Logger };

/** Connections per server: a tool call holds one exclusively, so elicitations are attributed to it. */
const MAX_CONNECTIONS = 8;
const MAX_TOOL_PAGES = 20;
const MAX_TEXT = 64 * 1024;

class CallAborted extends Error {}

/** The connections to one configured server, opened lazily and replaced when they close. */
class McpPool {
  private conns: McpConnection<TMcpCall>[] = [];
  private opening = 0;
  private tools: Promise<Tool[]> | null = null;
  private waiters: Array<() => void> = [];
  private closed = false;

  constructor(readonly config: TMcpServerConfig) {}

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Opens a connection; when `call` is given it is claimed for it before anyone else can see it. */
  private async open(call: TMcpCall | null): Promise<McpConnection<TMcpCall>> {
    this.opening++;
    try {
      const conn = await McpConnection.open<TMcpCall>(this.config, {
        elicit: (c, params, signal) => answerElicitation(c, params, signal),
        toolsChanged: () => {
          this.tools = null;
        },
      });
      if (this.closed) {
        await conn.close();
        throw new Error("the MCP connections are closing");
      }
      conn.activeCall = call;
      this.conns.push(conn);
      conn.onClosed(() => {
        this.conns = this.conns.filter((c) => c !== conn);
        // A restarted server may offer other tools.
        this.tools = null;
        this.wake();
      });
      return conn;
    } finally {
      this.opening--;
      this.wake();
    }
  }

  /** The server's tools (all pages), listed once per connection generation. */
  listTools(): Promise<Tool[]> {
    if (!this.tools) {
      const listing = (async () => {
        const conn = this.conns.find((c) => !c.closed) ?? (await this.open(null));
        const all: Tool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_TOOL_PAGES; page++) {
          const listed = await conn.client.listTools(cursor ? { cursor } : undefined, { timeout: 30_000 });
          all.push(...listed.tools);
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return all;
      })();
      this.tools = listing;
      listing.catch(() => {
        if (this.tools === listing) this.tools = null;
      });
    }
    return this.tools;
  }

  /** A connection with no call in flight, claimed for `call`; opens one when all are busy (up to the cap), else waits. */
  private async acquire(call: TMcpCall): Promise<McpConnection<TMcpCall>> {
    for (;;) {
      if (call.signal.aborted) throw new CallAborted();
      if (this.closed) throw new Error("the MCP connections are closing");
      const idle = this.conns.find((c) => !c.closed && c.activeCall === null);
      if (idle) {
        idle.activeCall = call;
        return idle;
      }
      if (this.conns.length + this.opening < MAX_CONNECTIONS) return this.open(call);
      await new Promise<void>((resolve) => {
        const done = () => {
          call.signal.removeEventListener("abort", done);
          resolve();
        };
        this.waiters.push(done);
        call.signal.addEventListener("abort", done);
      });
    }
  }

  /** Calls a tool; every failure becomes a result that says what happened (never a thrown error). */
  async call(call: TMcpCall, args: Record<string, unknown>): Promise<unknown> {
    const server = this.config.name;
    const timeout = this.config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    let conn: McpConnection<TMcpCall>;
    try {
      conn = await this.acquire(call);
    } catch (error) {
      if (error instanceof CallAborted || call.signal.aborted) return { error: `The call to the MCP server ${server} was cancelled before it started.`, cancelled: true };
      await call.record("mcp.unavailable", { callId: call.callId, server, reason: errorText(error) });
      return { error: `The MCP server ${server} is unavailable: ${errorText(error)}.` };
    }
    try {
      const result = (await conn.client.callTool({ name: call.tool, arguments: args }, undefined, {
        signal: call.signal,
        timeout,
        maxTotalTimeout: timeout,
        resetTimeoutOnProgress: true,
      })) as CallToolResult;
      return toolOutput(result);
    } catch (error) {
      if (conn.closed) {
        // The server's own stderr goes to the log only (it is not ours to put in a trajectory).
        call.log.warn({ server, tool: call.tool, responseId: call.responseId, stderr: conn.stderr.trim().slice(-1000) }, "MCP server stopped during a call");
        await call.record("mcp.server_stopped", { callId: call.callId, server, tool: call.tool });
        return { error: `The MCP server ${server} stopped during the call.` };
      }
      if (call.signal.aborted) return { error: `The call to the MCP server ${server} was cancelled.`, cancelled: true };
      if (isUnreachable(error)) {
        // The server could not be reached (an HTTP server that is down): start afresh next time.
        await conn.close();
        await call.record("mcp.unavailable", { callId: call.callId, server, tool: call.tool, reason: errorText(error) });
        return { error: `The MCP server ${server} could not be reached (${errorText(error)}).` };
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        await call.record("mcp.timeout", { callId: call.callId, server, tool: call.tool, timeoutMs: timeout });
        return { error: `The MCP server ${server} did not answer within ${Math.round(timeout / 1000)} seconds.`, timedOut: true };
      }
      await call.record("mcp.call_failed", { callId: call.callId, server, tool: call.tool, reason: errorText(error) });
      return { error: `The MCP server ${server} could not run ${call.tool}: ${errorText(error)}` };
    } finally {
      if (conn.activeCall === call) conn.activeCall = null;
      this.wake();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    await Promise.all(this.conns.map((c) => c.close()));
    this.conns = [];
  }
}

/** A transport failure to reach the server at all (the request never got there). */
function isUnreachable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && ["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "UND_ERR_SOCKET"].includes(code)) return true;
    if (e instanceof TypeError && /fetch failed/i.test(e.message)) return true;
  }
  return false;
}

const bounded = (text: string): string => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

/**
 * What the agent sees of an MCP tool result: the structured content when the tool gave one,
 * else its text (non-text parts are summarized, never inlined); an error result is `{error}`.
 */
export function toolOutput(result: CallToolResult): unknown {
  const parts = Array.isArray(result.content) ? result.content : [];
  const text = bounded(
    parts
      .filter((p): p is Extract<typeof p, { type: "text" }> => p.type === "text")
      .map((p) => p.text)
      .join("\n"),
  );
  const others = parts
    .filter((p) => p.type !== "text")
    .slice(0, 20)
    .map((p) => {
      const o = p as { type: string; mimeType?: string; uri?: string; name?: string; resource?: { uri?: string; mimeType?: string } };
      return { type: o.type, ...(o.mimeType ? { mimeType: o.mimeType } : {}), ...(o.uri ? { uri: o.uri } : {}), ...(o.resource?.uri ? { uri: o.resource.uri } : {}) };
    });
  if (result.isError) return { error: text || "The MCP tool reported an error.", ...(result.structuredContent ? { details: result.structuredContent } : {}) };
  if (result.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
  return others.length > 0 ? { text, content: others } : { text };
}

/** The MCP connections of one server process (one per database handle, so test apps stay apart). */
export class McpManager {
  private pools = new Map<string, McpPool>();

  private pool(config: TMcpServerConfig): McpPool {
    const key = JSON.stringify(config);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new McpPool(config);
      this.pools.set(key, pool);
    }
    return pool;
  }

  listTools(config: TMcpServerConfig): Promise<Tool[]> {
    return this.pool(config).listTools();
  }

  callTool(config: TMcpServerConfig, call: TMcpCall, args: Record<string, unknown>): Promise<unknown> {
    return this.pool(config).call(call, args);
  }

  /** Closes every connection (stdio servers are stopped); later use reconnects. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }
}
