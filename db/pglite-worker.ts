import { parentPort } from "node:worker_threads";
import { PGlite, type Results, type Transaction } from "@electric-sql/pglite";
import { AS_TEXT, type TPgliteOpen, type TPgliteRequest, type TWorkerError } from "./pglite-protocol";

/**
 * The thread PGlite runs on (db/pglite-thread.ts starts it): it answers the server's statements
 * one at a time, in order, so SQL never holds the server's event loop. Transactions keep PGlite's
 * own lock (`transaction`) while the server sends their statements; a statement outside one
 * waits for it, as it would on the server's thread. A closed database leaves the thread ready to
 * open the next one.
 */
const port = parentPort;
if (!port) throw new Error("db/pglite-worker.ts runs as a worker thread.");

const asText = (value: string) => value;
let pg: PGlite | null = null;

async function openPglite(options: TPgliteOpen): Promise<void> {
  if (pg) throw new Error("A database is already open on this thread.");
  const opened = new PGlite({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.image ? { loadDataDir: new Blob([options.image]) } : {}),
    pgliteWasmModule: options.pglite,
    initdbWasmModule: options.initdb,
  });
  await opened.waitReady;
  for (const oid of AS_TEXT) opened.parsers[oid] = asText;
  pg = opened;
}

async function closePglite(): Promise<void> {
  const closing = pg;
  pg = null;
  // A transaction still open (its server went away mid-way) rolls back first: PGlite closes after it.
  for (const held of open.values()) held.end(false);
  open.clear();
  statements.clear();
  await closing?.close();
}

type TOpen = { tx: Transaction; end: (commit: boolean) => void; endId: number | null };
const open = new Map<number, TOpen>();
/** The texts of the statements the server has sent, by number (db/pglite-thread.ts numbers them). */
const statements = new Map<number, string>();
let nextTx = 1;
const ROLLBACK = Symbol("rollback");

/** An error as plain data: its message, name and every plain property (SQLSTATE `code`, `constraint`, `detail`…). */
function errorData(error: unknown): TWorkerError {
  if (!(error instanceof Error)) return { message: String(error), name: "Error", props: {} };
  const props: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) if (["string", "number", "boolean"].includes(typeof value)) props[key] = value as string | number | boolean;
  return { message: error.message, name: error.name, props };
}

const reply = (id: number, result: unknown, transfer: ArrayBuffer[] = []) => port.postMessage({ id, ok: true, result }, transfer);
const fail = (id: number, error: unknown) => port.postMessage({ id, ok: false, error: errorData(error) });

/** PGlite's result without what cannot cross threads (a blob is never asked for). */
const plain = (r: Results<unknown>) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows });

function opened(): PGlite {
  if (!pg) throw new Error("No database is open on this thread.");
  return pg;
}

function target(tx: number | null): Pick<Transaction, "query" | "exec"> {
  if (tx === null) return opened();
  const held = open.get(tx);
  if (!held) throw new Error(`Transaction ${tx} is not open.`);
  return held.tx;
}

function begin(id: number): void {
  const txId = nextTx++;
  let end: (commit: boolean) => void = () => {};
  const ended = new Promise<boolean>((resolve) => {
    end = resolve;
  });
  const held: TOpen = { tx: null as unknown as Transaction, end, endId: null };
  opened().transaction(async (tx) => {
    held.tx = tx;
    open.set(txId, held);
    reply(id, txId);
    const commit = await ended;
    if (!commit) throw ROLLBACK;
  }).then(
    () => {
      open.delete(txId);
      if (held.endId !== null) reply(held.endId, null);
    },
    (error: unknown) => {
      open.delete(txId);
      if (held.endId !== null) {
        if (error === ROLLBACK) reply(held.endId, null);
        else fail(held.endId, error);
      } else fail(id, error); // BEGIN itself failed
    },
  );
}

async function handle(message: TPgliteRequest): Promise<void> {
  const { id } = message;
  try {
    switch (message.op) {
      case "open":
        await openPglite(message);
        return reply(id, null);
      case "query": {
        if (message.sql !== undefined) statements.set(message.statement, message.sql);
        const sql = statements.get(message.statement);
        if (sql === undefined) throw new Error(`Statement ${message.statement} was never sent.`);
        const result = await target(message.tx).query(sql, message.params, { rowMode: message.rowMode });
        // Drizzle maps an array row by its own column list: the fields are only sent for object rows.
        return reply(id, message.rowMode === "array" ? { rows: result.rows, affectedRows: result.affectedRows } : plain(result));
      }
      case "exec":
        return reply(id, (await target(message.tx).exec(message.sql)).map(plain));
      case "begin":
        return begin(id);
      case "end": {
        const held = open.get(message.tx);
        if (!held) throw new Error(`Transaction ${message.tx} is not open.`);
        held.endId = id;
        held.end(message.commit);
        return;
      }
      case "dump": {
        const bytes = await (await opened().dumpDataDir("none")).arrayBuffer();
        return reply(id, bytes, [bytes]);
      }
      case "close":
        await closePglite();
        return reply(id, null);
    }
  } catch (error) {
    fail(id, error);
  }
}

port.on("message", (message: TPgliteRequest) => void handle(message));
