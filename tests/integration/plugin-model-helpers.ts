import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { pluginSourcesFromEnv } from "../../server/plugins/loader";
import { startTestApp, type TTestApp } from "../../server/testing/test-app";
import { startFakeModel, type TFakeModel, type TFakeRequest } from "./fake-openai";

/**
 * What the plugin tests that drive a plugin's own model share: the fake OpenAI-compatible
 * endpoint's replies, the server with the plugins loaded from their folders through a plugins
 * file, and the run's trajectory as the export gives it.
 */

/** A non-streamed chat completion (what the OpenAI client and the Agents SDK ask for here). */
export const completion =
  (message: Record<string, unknown>, finish: "stop" | "tool_calls") =>
  async (res: ServerResponse, _req: TFakeRequest): Promise<void> => {
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion", created: 1, model: "fake", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
    );
  };
let calls = 0;
/** A reply calling one tool (each call gets a new id). */
export const toolCall = (name: string, args: Record<string, unknown>) =>
  completion({ role: "assistant", content: null, tool_calls: [{ id: `call_${++calls}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }, "tool_calls");
/** A reply of plain text that ends the loop. */
export const text = (content: string) => completion({ role: "assistant", content }, "stop");

/** The tool messages of the last request the model received (the whole loop's history), when a request came after index `from`. */
export const toolMessages = (fake: TFakeModel, from: number): string[] =>
  (fake.requests.length > from ? (fake.requests[fake.requests.length - 1] as TFakeRequest).body.messages : []).filter((m) => m.role === "tool").map((m) => String(m.content));

/** The run's trajectory as the export gives it (one JSON object per line). */
export async function trajectoryOf(app: TTestApp, key: string, id: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const res = await app.api(`/api/export/trajectory?responseId=${id}`, { key });
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
}

/**
 * A server with the given plugin folders enabled through a plugins file, and the fake model the
 * example plugins call (they read its address from the environment when they register).
 */
export async function startPluginApp(folders: string[], model: string): Promise<{ app: TTestApp; fake: TFakeModel; close: () => Promise<void> }> {
  const fake = await startFakeModel();
  process.env.COUNTERSIGN_EXAMPLE_MODEL_URL = fake.url;
  process.env.COUNTERSIGN_EXAMPLE_MODEL = model;
  const dir = mkdtempSync(join(tmpdir(), "countersign-plugin-app-"));
  const file = join(dir, "plugins.json");
  writeFileSync(file, JSON.stringify({ plugins: folders.map((path) => ({ path, enabled: true })) }));
  const app = await startTestApp({ plugins: pluginSourcesFromEnv({ COUNTERSIGN_PLUGINS_FILE: file }) });
  return {
    app,
    fake,
    close: async () => {
      await app.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
