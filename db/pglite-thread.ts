import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { AS_TEXT, type TPgliteOpen, type TPgliteReply, type TPgliteRequest } from "./pglite-protocol";

type TResults = { rows: unknown[]; fields?: { name: string; dataTypeID: number }[]; affectedRows?: number };
type TQueryOptions = { rowMode?: "array" | "object"; parsers?: Record<number, unknown> };
type TDistribute<T> = T extends unknown ? Omit<T, "id"> : never;

/** The statements of one open transaction, as drizzle's PGlite session calls them. */
export type TPgliteTx = {
  query: (sql: string, params?: unknown[], options?: TQueryOptions) => Promise<TResults>;
  exec: (sql: string) => Promise<TResults[]>;
};

/**
 * PGlite's two WebAssembly programs (the database and initdb), compiled once per process and
 * handed to every PGlite thread: compiling them anew took each new thread about a third of a second.
 */
let wasm: Promise<{ pglite: WebAssembly.Module; initdb: WebAssembly.Module }> | null = null;
function compiledWasm(): Promise<{ pglite: WebAssembly.Module; initdb: WebAssembly.Module }> {
  const compile = async (name: string) => WebAssembly.compile(await readFile(fileURLToPath(import.meta.resolve(`@electric-sql/pglite/${name}`))));
  wasm ??= Promise.all([compile("pglite.wasm"), compile("initdb.wasm")]).then(([pglite, initdb]) => ({ pglite, initdb }));
  return wasm;
}

/**
 * Threads whose database was closed, ready for the next one: starting a thread and loading PGlite
 * in it takes about a second more than opening a database on a thread that already has PGlite
 * loaded (tests open a hundred). Idle threads never keep the process alive.
 */
const idle: Worker[] = [];
const MAX_IDLE = 2;

function startWorker(): Worker {
  // The worker is TypeScript: it loads through tsx's loader, registered in its own thread (as the server runs on it).
  const entry = JSON.stringify(new URL("./pglite-worker.ts", import.meta.url).href);
  const worker = new Worker(`import("tsx/esm/api").then(({ register }) => { register(); return import(${entry}); })`, { eval: true });
  worker.unref();
  worker.on("exit", () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  // A thread that fails while idle is dropped; one in use fails its database (below).
  worker.on("error", () => {});
  return worker;
}

/**
 * Statements numbered at most: the app's statements are a fixed set, but SQL built with literals
 * could vary without end; past this many, a new statement is sent as text each time (number 0).
 */
const MAX_NUMBERED = 10_000;

/**
 * PGlite on a thread of its own (db/pglite-worker.ts), with the part of PGlite's interface drizzle
 * uses: `query`, `exec`, `transaction`. PGlite runs SQL synchronously on the thread that calls
 * it; on the server's thread, every statement held the event loop, so HTTP, live streams and the
 * runs' own work waited for it. On its own thread it runs beside them. Each statement costs a
 * message each way (about 0.1 ms).
 *
 * The thread keeps the process alive only while a statement is waiting for its answer.
 */
export class PgliteThread {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly statements = new Map<string, number>();
  private ended: Error | null = null;
  private readonly onMessage = (reply: TPgliteReply) => this.settle(reply);
  private readonly onError = (error: Error) => this.end(error);
  private readonly onExit = (code: number) => this.end(new Error(`The PGlite thread ended (exit code ${code}).`));

  private constructor(private readonly worker: Worker) {
    worker.on("message", this.onMessage);
    worker.on("error", this.onError);
    worker.on("exit", this.onExit);
  }

  /** Opens PGlite in `dataDir` (in memory when undefined), from `image` when given, on an idle thread or a new one. */
  static async open(options: { dataDir?: string; image?: Blob }): Promise<PgliteThread> {
    const image = options.image ? await options.image.arrayBuffer() : undefined;
    const request: TPgliteOpen = { ...(options.dataDir ? { dataDir: options.dataDir } : {}), ...(image ? { image } : {}), ...(await compiledWasm()) };
    const thread = new PgliteThread(idle.pop() ?? startWorker());
    try {
      await thread.call({ op: "open", ...request }, image ? [image] : []);
    } catch (error) {
      thread.detach();
      await thread.worker.terminate();
      throw error;
    }
    return thread;
  }

  query(sql: string, params: unknown[] = [], options?: TQueryOptions): Promise<TResults> {
    return this.statement(null, sql, params, options);
  }

  exec(sql: string): Promise<TResults[]> {
    return this.call({ op: "exec", tx: null, sql }) as Promise<TResults[]>;
  }

  /** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
  async transaction<T>(fn: (tx: TPgliteTx) => Promise<T>): Promise<T> {
    const txId = (await this.call({ op: "begin" })) as number;
    const tx: TPgliteTx = {
      query: (sql, params = [], options) => this.statement(txId, sql, params, options),
      exec: (sql) => this.call({ op: "exec", tx: txId, sql }) as Promise<TResults[]>,
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (error) {
      await this.call({ op: "end", tx: txId, commit: false }).catch(() => {});
      throw error;
    }
    await this.call({ op: "end", tx: txId, commit: true });
    return result;
  }

  /** The whole database as a tarball, which `open({ image })` opens again. */
  async dumpDataDir(): Promise<Blob> {
    return new Blob([(await this.call({ op: "dump" })) as ArrayBuffer]);
  }

  /** Closes the database; its thread waits for the next one (or ends, when enough wait already). */
  async close(): Promise<void> {
    if (this.ended) return;
    try {
      await this.call({ op: "close" });
    } catch (error) {
      this.detach();
      await this.worker.terminate();
      throw error;
    }
    this.ended = new Error("The database is closed.");
    this.detach();
    if (idle.length < MAX_IDLE) idle.push(this.worker);
    else await this.worker.terminate();
  }

  private statement(tx: number | null, sql: string, params: unknown[], options?: TQueryOptions): Promise<TResults> {
    // Drizzle's own parsers are the ones the worker's PGlite applies already; any other cannot cross threads.
    for (const oid of Object.keys(options?.parsers ?? {})) {
      if (!AS_TEXT.has(Number(oid))) return Promise.reject(new Error(`The PGlite thread cannot apply a parser for type ${oid}.`));
    }
    const rowMode = options?.rowMode ?? "object";
    // A statement's text crosses to the thread once; later calls send its number.
    const known = this.statements.get(sql);
    if (known !== undefined) return this.call({ op: "query", tx, statement: known, params, rowMode }) as Promise<TResults>;
    const statement = this.statements.size < MAX_NUMBERED ? this.statements.size + 1 : 0;
    if (statement !== 0) this.statements.set(sql, statement);
    return this.call({ op: "query", tx, statement, sql, params, rowMode }) as Promise<TResults>;
  }

  private call(request: TDistribute<TPgliteRequest>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  private settle(reply: TPgliteReply): void {
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(Object.assign(new Error(reply.error.message), reply.error.props, { name: reply.error.name }));
  }

  /** The thread is gone (crashed, terminated): every waiting statement fails, and so does every later one. */
  private end(error: Error): void {
    this.ended ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
    this.worker.unref();
  }

  private detach(): void {
    this.worker.off("message", this.onMessage);
    this.worker.off("error", this.onError);
    this.worker.off("exit", this.onExit);
  }
}
