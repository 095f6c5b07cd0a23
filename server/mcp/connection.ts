import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { TMcpServerConfig } from "./config";

/** What an elicitation needs to know about the tool call it happens in. */
export type TMcpCallContext = { readonly label: string };

export type TElicitationHandler<C> = (call: C, params: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult>;

const CONNECT_TIMEOUT_MS = 30_000;
const STDERR_TAIL = 2000;

/**
 * One MCP client session with one server (a child process for stdio, an HTTP session for
 * Streamable HTTP). At most one tool call runs on it at a time (`activeCall`), so an
 * elicitation request the server sends while a call is in flight belongs to that call.
 */
export class McpConnection<C extends TMcpCallContext> {
  readonly client: Client;
  closed = false;
  /** The tool call in flight on this connection, if any. */
  activeCall: C | null = null;
  private stderrTail = "";
  private closeListeners: Array<() => void> = [];

  private constructor(
    readonly config: TMcpServerConfig,
    private readonly transport: Transport,
  ) {
    this.client = new Client({ name: "countersign", version: "0.1.0" }, { capabilities: { elicitation: { form: {}, url: {} } } });
  }

  /** Connects and initializes; throws a sentence when the server cannot be started or reached. */
  static async open<C extends TMcpCallContext>(
    config: TMcpServerConfig,
    handlers: { elicit: TElicitationHandler<C>; toolsChanged: () => void },
  ): Promise<McpConnection<C>> {
    const transport: Transport =
      config.transport === "stdio"
        ? new StdioClientTransport({ command: config.command, args: config.args ?? [], env: { ...getDefaultEnvironment(), ...config.env }, cwd: config.cwd, stderr: "pipe" })
        : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: config.headers ? { headers: config.headers } : undefined });
    const conn = new McpConnection<C>(config, transport);
    if (transport instanceof StdioClientTransport) {
      (transport.stderr as Readable | null)?.on("data", (chunk: Buffer) => {
        conn.stderrTail = (conn.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
    }
    conn.client.onclose = () => conn.markClosed();
    // Streamable HTTP: a server that went away leaves its streams reconnecting; once the transport
    // gives up, the session is gone. Closing it fails the call in flight at once (instead of at its
    // timeout) and makes the next call reconnect.
    conn.client.onerror = (error) => {
      if (config.transport === "http" && /Maximum reconnection attempts/i.test(error.message)) void conn.close();
    };
    conn.client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const call = conn.activeCall;
      // Nothing is running on this connection: there is no run to ask on behalf of.
      if (!call) return { action: "cancel" };
      return handlers.elicit(call, request.params, extra.signal);
    });
    conn.client.setNotificationHandler(ToolListChangedNotificationSchema, () => handlers.toolsChanged());
    try {
      await conn.client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      conn.markClosed();
      await transport.close().catch(() => {});
      throw new Error(`could not connect (${errorText(error)}${conn.stderrTail ? `; stderr: ${conn.stderrTail.trim().slice(-300)}` : ""})`);
    }
    return conn;
  }

  /** Runs `fn` when the connection closes (at once if it already has). */
  onClosed(fn: () => void): void {
    if (this.closed) fn();
    else this.closeListeners.push(fn);
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closeListeners.splice(0)) {
      try {
        fn();
      } catch {}
    }
  }

  /** The last lines the server wrote to stderr (stdio only), for error messages. */
  get stderr(): string {
    return this.stderrTail;
  }

  async close(): Promise<void> {
    this.markClosed();
    await this.client.close().catch(() => {});
  }
}

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 500);
