import { type PGlite, parse, protocol, type Results, types } from "@electric-sql/pglite";

type TQueryOptions = Parameters<PGlite["query"]>[2];

/** A transaction of `PgliteStatements.transaction`: what drizzle's PGlite session uses of PGlite's own. */
export type TPgliteTransaction = { query: <T>(text: string, params?: unknown[], options?: TQueryOptions) => Promise<Results<T>>; rollback: () => Promise<void>; readonly closed: boolean };

/**
 * How many statements one PGlite database keeps prepared. Countersign's statements are built once
 * (db/prepared.ts) and number a few hundred; SQL whose text varies (an `in` list of varying length)
 * would otherwise add one prepared statement per shape for as long as the process runs. Past the
 * bound, the statement used least recently is closed (PostgreSQL frees its plan).
 */
export const MAX_PREPARED = 500;

const { serialize } = protocol;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Describe (the unnamed portal), Execute (all rows), Sync: what follows every Bind. */
const DESCRIBE_EXECUTE_SYNC = Uint8Array.of(0x44, 0, 0, 0, 6, 0x50, 0, 0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4);

/**
 * The messages that run the prepared statement `name` with `values` (text, or bytes sent as they
 * are, as PGlite's own serializer sends them), results in text: Bind, then Describe, Execute and Sync.
 */
function bindMessages(name: string, values: ReadonlyArray<string | Uint8Array | null>): Uint8Array {
  const statement = encoder.encode(name);
  const encoded = values.map((value) => (typeof value === "string" ? encoder.encode(value) : value));
  // Length, the unnamed portal, the statement, no parameter formats (all text), the values, no result formats (all text).
  const bindLength = 4 + 1 + statement.length + 1 + 2 + 2 + encoded.reduce((size, value) => size + 4 + (value?.length ?? 0), 0) + 2;
  const out = new Uint8Array(1 + bindLength + DESCRIBE_EXECUTE_SYNC.length);
  const view = new DataView(out.buffer);
  out[0] = 0x42;
  view.setInt32(1, bindLength);
  let at = 6; // after the portal's empty name
  out.set(statement, at);
  at += statement.length + 1;
  view.setInt16(at, 0);
  view.setInt16(at + 2, encoded.length);
  at += 4;
  for (const value of encoded) {
    view.setInt32(at, value === null ? -1 : value.length);
    at += 4;
    if (value !== null) {
      out.set(value, at);
      at += value.length;
    }
  }
  view.setInt16(at, 0);
  out.set(DESCRIBE_EXECUTE_SYNC, at + 2);
  return out;
}

/** Message types of a statement's reply that carry nothing a result needs (parse, bind, close complete, no data, ready, empty query, portal suspended). */
const QUIET = new Set([0x31, 0x32, 0x33, 0x6e, 0x5a, 0x49, 0x73]);
/** Commands whose row count PGlite's `parseResults` adds to `affectedRows`. */
const AFFECTING = new Set(["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"]);

/**
 * The result of one executed statement from its reply's bytes, as PGlite's `parse.parseResults`
 * builds it (fields, rows through the type parsers, command, row count, affected rows); null when
 * the reply holds anything else (an error, a notice, a notification, a parameter status), which
 * PGlite's own parser then reads. PGlite's parser copies every value's bytes before decoding them
 * and builds an object per message; here the values are decoded in place.
 */
function readResult(bytes: Uint8Array, parsers: PGlite["parsers"], rowMode: "array" | "object" | undefined): Results | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fields: { name: string; dataTypeID: number }[] = [];
  let rows: unknown[] = [];
  let affectedRows = 0;
  let result: Results | null = null;
  for (let at = 0; at < bytes.length; ) {
    const type = bytes[at] as number;
    const end = at + 1 + view.getInt32(at + 1);
    let p = at + 5;
    if (type === 0x54) {
      // RowDescription: per field its name, table, column, type, size, modifier, format.
      const count = view.getInt16(p);
      p += 2;
      fields = [];
      for (let i = 0; i < count; i++) {
        const nul = bytes.indexOf(0, p);
        const name = decoder.decode(bytes.subarray(p, nul));
        p = nul + 1 + 6;
        fields.push({ name, dataTypeID: view.getInt32(p) });
        p += 12;
      }
    } else if (type === 0x44) {
      // DataRow: per column its length (-1: null) and text.
      const count = view.getInt16(p);
      p += 2;
      const values: unknown[] = new Array(count);
      for (let i = 0; i < count; i++) {
        const length = view.getInt32(p);
        p += 4;
        if (length === -1) {
          values[i] = null;
          continue;
        }
        const text = decoder.decode(bytes.subarray(p, p + length));
        p += length;
        const oid = fields[i]?.dataTypeID as number;
        const parser = parsers[oid] ?? types.parsers[oid];
        values[i] = parser ? parser(text, oid) : text;
      }
      if (rowMode === "array") rows.push(values);
      else {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < count; i++) row[fields[i]?.name as string] = values[i];
        rows.push(row);
      }
    } else if (type === 0x43) {
      // CommandComplete: its tag, e.g. "UPDATE 1", "SELECT 3".
      const words = decoder.decode(bytes.subarray(p, end - 1)).split(" ");
      const command = words[0] as string;
      const rowCount = Number.parseInt(words[words.length - 1] as string, 10);
      if (AFFECTING.has(command)) affectedRows += rowCount;
      result = { rows, fields, command, affectedRows, ...(Number.isNaN(rowCount) ? {} : { rowCount }) } as Results;
      fields = [];
      rows = [];
    } else if (!QUIET.has(type)) return null;
    at = end;
  }
  return result ?? { affectedRows: 0, rows: [], fields: [] };
}

/** A reply `readResult` left to PGlite: its first error thrown, as PGlite's `execProtocolStream` does, or its result. */
function readWithPglite(bytes: Uint8Array, parsers: PGlite["parsers"], options: TQueryOptions): Results {
  const messages: Parameters<typeof parse.parseResults>[0] = [];
  new protocol.Parser().parse(bytes, (message) => void messages.push(message));
  const error = messages.find((message) => message instanceof protocol.messages.DatabaseError);
  if (error) throw error;
  return parse.parseResults(messages, parsers, options)[0] as Results;
}

/** As PGlite's `query` marks an error it throws: the statement, its parameters and options. */
function withQuery(error: unknown, text: string, params: unknown[], options: TQueryOptions): unknown {
  if (error && typeof error === "object" && "code" in error) Object.assign(error, { query: text, params, queryOptions: options });
  return error;
}

/** Numbers each PgliteStatements, so two on the same database (a benchmark's beside the app's) never name a statement alike. */
let instances = 0;

/**
 * PGlite's `query` with every statement prepared, named, once per database. PGlite's own `query`
 * parses and plans its statement again each time (an unnamed statement, then a describe to learn
 * the parameters' types): six calls into the database for each. Here a statement seen before is
 * one call (bind, describe, execute, sync sent together) and skips the parse and the plan. Its
 * reply is read in place (`readResult`) instead of through PGlite's message parser, which copied
 * each value's bytes before decoding it; a reply with anything but rows and counts in it (an
 * error, a notice) is read by PGlite's parser and `parse.parseResults`, as its `query` reads it.
 * On this machine a one-row `update … returning` on disk took 0.33–0.36 ms through PGlite's
 * `query`, 0.18 ms prepared, and 0.12–0.16 ms with the reply read in place.
 *
 * Through PGlite's public protocol API (`execProtocolRawStream`, `execProtocolStream`,
 * `protocol`, `parse`); the locking is its own: outside a transaction the statement waits for
 * PGlite's transaction lock as `query` does, inside one it runs under the lock the transaction
 * holds. Options this does not handle (a blob for COPY, parameter types) go to PGlite's `query`.
 * Notifications (LISTEN) are not delivered through it: Countersign listens only on PostgreSQL.
 */
export class PgliteStatements {
  /** Statement text → its name and parameter types; in order of last use (the first is the next to close). */
  private readonly prepared = new Map<string, { name: string; types: number[] }>();
  private made = 0;
  /** Statements to close with the next prepare: prepared again after their table changed. */
  private stale: string[] = [];
  private readonly prefix = `cs${++instances}_`;

  /** `adjust`: applied to the options of every statement, in transactions too (the handle drops drizzle's redundant parsers). */
  constructor(
    private readonly client: PGlite,
    private readonly adjust: (options: TQueryOptions) => TQueryOptions = (options) => options,
  ) {}

  /** `client.query(text, params, options)`; `transaction`: run in that transaction (one of `transaction` below). */
  async query<T>(text: string, params: unknown[] = [], given: TQueryOptions = {}, transaction?: TPgliteTransaction): Promise<Results<T>> {
    const options = this.adjust(given);
    if (options?.blob !== undefined || options?.paramTypes !== undefined) {
      if (transaction) throw new Error("A COPY blob or parameter types are not supported in a transaction of db/pglite-statements.ts");
      return this.client.query<T>(text, params, options);
    }
    if (transaction?.closed) throw new Error("Transaction is closed");
    const client = this.client;
    await client._checkReady();
    const run = () => client._runExclusiveQuery(() => this.run<T>(text, params, options, transaction === undefined));
    return transaction ? run() : client._runExclusiveTransaction(run);
  }

  /**
   * `client.transaction(fn)` as PGlite runs it (under its transaction lock, the statements in
   * between under its query lock, ROLLBACK when `fn` throws or calls `tx.rollback()`, an error
   * when the COMMIT rolled back), with BEGIN, COMMIT and ROLLBACK run as prepared statements like
   * every other. PGlite sends each of them as a simple query in two calls into the database (the
   * query, then a sync) and reads the reply with its own parser; here each is one call. A
   * one-statement transaction took 0.20–0.23 ms this way against 0.26–0.29 ms through PGlite's
   * (docs/benchmarks.md has what it does to an approval's round trip).
   */
  async transaction<R>(fn: (tx: TPgliteTransaction) => Promise<R>): Promise<R> {
    const client = this.client;
    await client._checkReady();
    return client._runExclusiveTransaction(async () => {
      const control = (text: string, sync: boolean) => client._runExclusiveQuery(() => this.run(text, [], {}, sync));
      await control("BEGIN", false);
      let closed = false;
      const end = async (text: "COMMIT" | "ROLLBACK") => {
        if (closed) throw new Error("Transaction is closed");
        closed = true;
        return control(text, true);
      };
      const tx: TPgliteTransaction = {
        query: (text, params, options) => this.query(text, params, options, tx),
        rollback: async () => void (await end("ROLLBACK")),
        get closed() {
          return closed;
        },
      };
      try {
        const result = await fn(tx);
        // PostgreSQL answers the COMMIT of a transaction a failed statement aborted with a rollback, not an error.
        if (!closed && (await end("COMMIT")).command === "ROLLBACK") throw new Error("The transaction was rolled back: a statement in it failed");
        return result;
      } catch (error) {
        if (!closed) await end("ROLLBACK");
        throw error;
      }
    });
  }

  private async run<T>(text: string, params: unknown[], options: TQueryOptions, sync: boolean, again = true): Promise<Results<T>> {
    const client = this.client;
    try {
      const statement = this.prepared.get(text) ?? (await this.prepare(text));
      this.prepared.delete(text);
      this.prepared.set(text, statement);
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const type = statement.types[i] as number;
        const serializer = options?.serializers?.[type] ?? client.serializers[type];
        const serialized: unknown = serializer ? serializer(value) : String(value);
        return serialized instanceof Uint8Array ? serialized : String(serialized);
      });
      const chunks: Uint8Array[] = [];
      // The reply's bytes are a view of the database's memory, reused by the next call: copied.
      await client.execProtocolRawStream(bindMessages(statement.name, values), { syncToFs: false, onRawData: (chunk) => void chunks.push(chunk.slice()) });
      if (sync) await client.syncToFs();
      const reply = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
      const parsers = options?.parsers ? { ...client.parsers, ...options.parsers } : client.parsers;
      return (readResult(reply, parsers, options?.rowMode) ?? readWithPglite(reply, parsers, options)) as Results<T>;
    } catch (error) {
      // The statement's result columns changed since it was prepared (its table was altered): it is
      // prepared again, at once outside a transaction (as postgres.js does); in one, the error has
      // ended the transaction, and the next use prepares it.
      const prepared = this.prepared.get(text);
      if ((error as { code?: string }).code === "0A000" && prepared) {
        this.prepared.delete(text);
        this.stale.push(prepared.name);
        if (sync && again) return this.run(text, params, options, sync, false);
      }
      throw withQuery(error, text, params, options);
    }
  }

  /** Parses and plans `text` as a named statement (closing the least recently used one past the bound). */
  private async prepare(text: string): Promise<{ name: string; types: number[] }> {
    const name = `${this.prefix}${++this.made}`;
    const parts = this.stale.map((stale) => serialize.close({ type: "S", name: stale }));
    this.stale = [];
    if (this.prepared.size >= MAX_PREPARED) {
      const [oldest, statement] = this.prepared.entries().next().value as [string, { name: string }];
      this.prepared.delete(oldest);
      parts.push(serialize.close({ type: "S", name: statement.name }));
    }
    parts.push(serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync());
    const messages = await this.client.execProtocolStream(Buffer.concat(parts), { syncToFs: false });
    return { name, types: parse.parseDescribeStatementResults(messages) };
  }
}
