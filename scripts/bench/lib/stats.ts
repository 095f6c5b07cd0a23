/** Percentiles, timing and the result rows every benchmark returns. */

export type TTarget =
  /** value / limit must be at most `x` (latencies: "≤ 4× the raw p50"). */
  | { kind: "maxRatio"; x: number }
  /** value / limit must be at least `x` (throughputs: "≥ 40% of raw"). */
  | { kind: "minRatio"; x: number }
  /** value itself must be at most `x` (in the row's unit). */
  | { kind: "maxValue"; x: number };

export type TRow = {
  bench: string;
  db: string;
  measure: string;
  value: number;
  unit: string;
  /** The physical limit measured in the same run (same unit), if any. */
  limit?: number;
  limitLabel?: string;
  target?: TTarget;
  note?: string;
};

/** What a benchmark module returns: rows, server problems seen, and notes (e.g. query plans). */
export type TOutcome = { rows: TRow[]; problems?: string[]; notes?: string[] };

export type TResultRow = TRow & { ratio: number | null; met: boolean | null };

export const now = (): number => performance.now();

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export function judge(row: TRow): TResultRow {
  const ratio = row.limit !== undefined && row.limit > 0 ? row.value / row.limit : null;
  let met: boolean | null = null;
  if (row.target?.kind === "maxRatio" && ratio !== null) met = ratio <= row.target.x;
  if (row.target?.kind === "minRatio" && ratio !== null) met = ratio >= row.target.x;
  if (row.target?.kind === "maxValue") met = row.value <= row.target.x;
  return { ...row, ratio, met };
}

const fmt = (v: number): string => {
  if (!Number.isFinite(v)) return "n/a";
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString("en-US");
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
};

export const fmtValue = (v: number, unit: string): string => `${fmt(v)} ${unit}`.trim();

function fmtRatio(r: TResultRow): string {
  if (r.ratio === null) return "—";
  return r.target?.kind === "minRatio" || r.unit.endsWith("/s") ? `${(r.ratio * 100).toFixed(0)}%` : `${r.ratio.toFixed(2)}×`;
}

function fmtTarget(t: TTarget | undefined, unit: string): string {
  if (!t) return "—";
  if (t.kind === "maxRatio") return `≤ ${t.x}×`;
  if (t.kind === "minRatio") return `≥ ${Math.round(t.x * 100)}%`;
  return `≤ ${t.x} ${unit}`;
}

/** The markdown table: benchmark | database | measure | value | limit (same run) | ratio | target | met? */
export function markdownTable(rows: readonly TResultRow[]): string {
  const lines = [
    "| benchmark | database | measure | value | limit (same run) | ratio | target | met? |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const limit = r.limit === undefined ? "—" : `${fmtValue(r.limit, r.unit)}${r.limitLabel ? ` (${r.limitLabel})` : ""}`;
    const met = r.met === null ? "—" : r.met ? "yes" : "**no**";
    lines.push(`| ${r.bench} | ${r.db} | ${r.measure} | ${fmtValue(r.value, r.unit)} | ${limit} | ${fmtRatio(r)} | ${fmtTarget(r.target, r.unit)} | ${met} |`);
  }
  return lines.join("\n");
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
