import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TMcpServerConfig } from "./config";

/**
 * What the process's dependencies hold of its MCP servers (implemented by `McpManager` in
 * ./manager.ts, created once in the composition root): list and call a server's tools, and stop
 * them all at shutdown. A call carries the tool call's own context (see `TMcpCall`).
 */
export type TMcpServers = {
  listTools(config: TMcpServerConfig): Promise<Tool[]>;
  callTool(config: TMcpServerConfig, call: { label: string; tool: string }, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
};
