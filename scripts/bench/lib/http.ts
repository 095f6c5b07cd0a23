import http from "node:http";
import { now } from "./stats";

/** A small keep-alive HTTP client: one node:http Agent, at most `maxSockets` connections. */
export class Client {
  readonly agent: http.Agent;
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
    maxSockets = 16,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** Sends once more when a reused keep-alive socket was closed by the server meanwhile (Node's documented race). */
  async request(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    try {
      return await this.send(method, path, body);
    } catch (error) {
      if ((error as { reused?: boolean }).reused && (error as NodeJS.ErrnoException).code === "ECONNRESET") return this.send(method, path, body);
      throw error;
    }
  }

  private send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = {};
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${path}`, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", (error) => reject(Object.assign(error, { reused: req.reusedSocket })));
      req.end(payload);
    });
  }

  /** JSON request that must answer 2xx. */
  async json<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${res.text.slice(0, 300)}`);
    return JSON.parse(res.text) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Failed load tasks of the whole run, for the report. */
export const loadProblems: string[] = [];

/**
 * Closed-loop load: `concurrency` workers call `task` until `total` tasks ran or `durationMs`
 * passed. Returns each task's latency (ms), the count and the elapsed wall time.
 */
export async function runLoad(options: { concurrency: number; total?: number; durationMs?: number; task: (i: number) => Promise<void> }) {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: unknown = null;
  const start = now();
  const deadline = options.durationMs === undefined ? Number.POSITIVE_INFINITY : start + options.durationMs;
  const worker = async () => {
    while (now() < deadline) {
      const i = next++;
      if (options.total !== undefined && i >= options.total) return;
      const t0 = now();
      try {
        await options.task(i);
        latencies.push(now() - t0);
      } catch (error) {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsedMs = now() - start;
  if (errors > 0) {
    const line = `${errors} of ${errors + latencies.length} load tasks failed; first: ${firstError instanceof Error ? firstError.message : String(firstError)}`;
    loadProblems.push(line);
    console.error(`  ! ${line}`);
  }
  return { latencies, count: latencies.length, errors, elapsedMs, perSecond: (latencies.length / elapsedMs) * 1000 };
}

/**
 * A raw SSE client: calls `onEvent` with each complete event block (the text between blank
 * lines) and the time it arrived. `ready` resolves when the response headers arrive.
 */
export function openSse(url: string, headers: Record<string, string>, agent: http.Agent, onEvent: (block: string, at: number) => void) {
  let buffer = "";
  let req: http.ClientRequest | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    req = http.get(url, { headers: { accept: "text/event-stream", ...headers }, agent }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`SSE ${url} → ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const at = now();
        buffer += chunk;
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          onEvent(buffer.slice(0, cut), at);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf("\n\n");
        }
      });
      res.on("error", () => {});
      resolve();
    });
    req.on("error", reject);
  });
  return { ready, close: () => req?.destroy() };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
