/**
 * What db/pglite-thread.ts and the PGlite worker (db/pglite-worker.ts) say to each other: one
 * request per statement, transaction boundary, open, dump or close, each answered once by its `id`.
 */
export type TPgliteRequest =
  | ({ op: "open"; id: number } & TPgliteOpen)
  /** `sql` is the statement's text the first time it is sent with `statement`, then only its number. */
  | { op: "query"; id: number; tx: number | null; statement: number; sql?: string; params: unknown[]; rowMode: "array" | "object" }
  | { op: "exec"; id: number; tx: number | null; sql: string }
  | { op: "begin"; id: number }
  | { op: "end"; id: number; tx: number; commit: boolean }
  | { op: "dump"; id: number }
  | { op: "close"; id: number };

/** Where the worker opens PGlite, from which image, with PGlite's WebAssembly compiled once per process. */
export type TPgliteOpen = { dataDir?: string; image?: ArrayBuffer; pglite: WebAssembly.Module; initdb: WebAssembly.Module };

export type TWorkerError = { message: string; name: string; props: Record<string, string | number | boolean> };
export type TPgliteReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: TWorkerError };

/**
 * The types drizzle has PGlite hand back as the text PostgreSQL sent (timestamp, timestamptz,
 * interval, date, and the arrays numeric[], timestamp[], timestamptz[], interval[], date[]), as
 * drizzle-orm/pglite's session lists them. The worker's PGlite parses them so itself: drizzle's
 * per-statement parsers (functions, which cannot cross threads) are left behind, and PGlite no
 * longer merges them into its 300 others for every result (about 0.15 ms of CPU per statement).
 */
export const AS_TEXT: ReadonlySet<number> = new Set([1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182]);
