import { describe, expect, it } from "vitest";
import { z } from "zod";
import { echoTool, execTool } from "../tools/host-tools";
import { mcpServersFromEnv } from "./config";
import { elicitationQuestion } from "./elicitation";
import { toolOutput } from "./manager";
import { globMatches, mcpAction, mcpToolName } from "./names";
import { approvalPolicyFor, type TMcpHostTool } from "./policy";

const mcpTool = (server: string, tool: string, extra: Partial<TMcpHostTool["mcp"]> = {}): TMcpHostTool => ({
  ...echoTool,
  name: mcpToolName(server, tool),
  argsSchema: z.unknown(),
  action: mcpAction(server, tool),
  mcp: { server, tool, ...extra },
});

describe("MCP names", () => {
  it("tool names are mcp_<server>_<tool>; names that had to change get a hash so they stay distinct", () => {
    expect(mcpToolName("fixture", "write_note")).toBe("mcp_fixture_write_note");
    const dotted = mcpToolName("fixture", "notes.write");
    expect(dotted).toMatch(/^mcp_fixture_notes_write_[0-9a-f]{8}$/);
    expect(dotted).not.toBe(mcpToolName("fixture", "notes_write"));
    expect(mcpToolName("fixture", "x".repeat(100)).length).toBeLessThanOrEqual(64);
    expect(mcpAction("fixture", "write_note")).toBe("mcp:fixture.write_note");
  });

  it("patterns match whole actions with * for any run of characters", () => {
    expect(globMatches("mcp:*", "mcp:fixture.echo")).toBe(true);
    expect(globMatches("mcp:fixture.*", "mcp:fixture.echo")).toBe(true);
    expect(globMatches("mcp:fixture.*", "mcp:other.echo")).toBe(false);
    expect(globMatches("mcp:fix.ture", "mcp:fixXture")).toBe(false);
  });
});

describe("approval policy by action", () => {
  it("existing tools keep their policy by name; unnamed ones never ask", () => {
    expect(approvalPolicyFor({ approval: { exec: "always" } }, execTool)).toBe("always");
    expect(approvalPolicyFor({ approval: {} }, echoTool)).toBe("never");
    expect(approvalPolicyFor({ approval: { "tool:exec": "review" } }, execTool)).toBe("review");
  });

  it("MCP tools: agent exact entry, then the server's entry, then agent patterns, then the server's *, else a person decides", () => {
    const note = mcpTool("fixture", "write_note", { serverApproval: { write_note: "never", "*": "review" } });
    expect(approvalPolicyFor({ approval: { "mcp:fixture.write_note": "always" } }, note)).toBe("always");
    expect(approvalPolicyFor({ approval: { "mcp:*": "always" } }, note)).toBe("never");
    const echo = mcpTool("fixture", "echo", { serverApproval: { "*": "review" } });
    expect(approvalPolicyFor({ approval: { "mcp:*": "always", "mcp:fixture.*": "never" } }, echo)).toBe("never");
    expect(approvalPolicyFor({ approval: {} }, echo)).toBe("review");
    expect(approvalPolicyFor({ approval: {} }, mcpTool("fixture", "echo"))).toBe("always");
    // A server that cannot be reached runs nothing, so nobody is asked.
    expect(approvalPolicyFor({ approval: { "mcp:*": "always" } }, mcpTool("gone", "x", { unavailable: true }))).toBe("never");
    // Prototype keys are not policies.
    expect(approvalPolicyFor({ approval: {} }, mcpTool("fixture", "constructor"))).toBe("always");
  });
});

describe("elicitation → question", () => {
  it("a form of primitive fields keeps the server's field names for the answer", () => {
    const q = elicitationQuestion("fixture", {
      mode: "form",
      message: "Order?",
      requestedSchema: { type: "object", properties: { fullName: { type: "string" }, n: { type: "integer", minimum: 1 } }, required: ["fullName"] },
    });
    expect(q).toMatchObject({ ok: true, mode: "form", keys: ["fullName", "n"], question: { questionId: "form", header: "fixture", presentation: "form" } });
    if (q.ok && q.mode === "form") expect(q.question.fields?.map((f) => f.name)).toEqual(["fullname", "n"]);
  });

  it("a URL is confirmed literally; what cannot be shown is refused", () => {
    expect(elicitationQuestion("a-very-long-server-name", { mode: "url", message: "Go", url: "https://example.com/a?b=1", elicitationId: "e1" })).toMatchObject({
      ok: true,
      question: { questionId: "confirm_url", header: "a-very-long…", url: "https://example.com/a?b=1" },
    });
    expect(elicitationQuestion("s", { mode: "url", message: "Go", url: "https://user:pw@example.com/", elicitationId: "e2" })).toMatchObject({ ok: false });
    expect(
      elicitationQuestion("s", { mode: "form", message: "x", requestedSchema: { type: "object", properties: { sizes: { type: "array", items: { type: "number" } } } } as never }),
    ).toMatchObject({ ok: false, reason: "Field sizes: a list can only be a multi-select of string choices." });
  });
});

describe("tool results and configuration", () => {
  it("structured content wins; text is joined; errors are {error}", () => {
    expect(toolOutput({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toEqual({ text: "a\nb" });
    expect(toolOutput({ content: [{ type: "text", text: "x" }], structuredContent: { ok: true } })).toEqual({ ok: true });
    expect(toolOutput({ content: [{ type: "text", text: "boom" }], isError: true })).toEqual({ error: "boom" });
    expect(toolOutput({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] })).toEqual({ text: "", content: [{ type: "image", mimeType: "image/png" }] });
  });

  it("COUNTERSIGN_MCP_SERVERS is validated", () => {
    expect(mcpServersFromEnv(undefined)).toEqual([]);
    expect(mcpServersFromEnv('[{"name":"web","transport":"http","url":"http://127.0.0.1:1/mcp"}]')).toEqual([{ name: "web", transport: "http", url: "http://127.0.0.1:1/mcp" }]);
    expect(() => mcpServersFromEnv("{")).toThrow(/not valid JSON/);
    expect(() => mcpServersFromEnv('[{"name":"Bad Name","transport":"stdio","command":"x"}]')).toThrow(/invalid: 0\.name/);
    expect(() => mcpServersFromEnv('[{"name":"a","transport":"stdio","command":"x"},{"name":"a","transport":"stdio","command":"y"}]')).toThrow(/unique/);
  });
});
