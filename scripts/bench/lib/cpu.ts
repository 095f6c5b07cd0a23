import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time from /proc, in milliseconds: what a benchmark phase cost, not how long it took. On a
 * shared machine wall times move with the load; CPU time per operation moves far less, so these
 * rows are the ones to compare between runs. Linux only; elsewhere every reading is NaN.
 */

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime, stime, cutime, cstime of a process (the last two: its children it has waited for). */
function ticks(pid: number): [number, number, number, number] | null {
  try {
    // The command name may contain spaces or parens: the fields start after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [Number(f[11]), Number(f[12]), Number(f[13]), Number(f[14])];
  } catch {
    return null;
  }
}

/** The process's own CPU time (user + system). */
export function processCpuMs(pid: number): number {
  const t = ticks(pid);
  return t ? (t[0] + t[1]) * TICK_MS : Number.NaN;
}

/** The process's CPU time plus that of the children it has reaped (a spawner and the commands it forked). */
export function processTreeCpuMs(pid: number): number {
  const t = ticks(pid);
  return t ? (t[0] + t[1] + t[2] + t[3]) * TICK_MS : Number.NaN;
}

/** Every PostgreSQL process on this machine (a shared server counts other clients too; the bench runs alone). */
export function postgresCpuMs(): number {
  let total = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return Number.NaN;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const t = ticks(Number(entry));
      if (t) total += (t[0] + t[1]) * TICK_MS;
    } catch {}
  }
  return total;
}

/** The whole machine's busy CPU time (user, nice, system, irq, softirq, steal): every process and the kernel's own threads. */
export function machineCpuMs(): number {
  try {
    const [, ...f] = (readFileSync("/proc/stat", "utf8").split("\n")[0] as string).trim().split(/\s+/);
    const n = f.map(Number);
    return ((n[0] ?? 0) + (n[1] ?? 0) + (n[2] ?? 0) + (n[5] ?? 0) + (n[6] ?? 0) + (n[7] ?? 0)) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** Readings before a phase; `per(n)` gives each one's CPU per operation after `n` operations. */
export function cpuMeter<K extends string>(readers: Record<K, () => number>): { per: (n: number) => Record<K, number> } {
  const start = Object.fromEntries(Object.entries(readers).map(([k, read]) => [k, (read as () => number)()])) as Record<K, number>;
  return {
    per: (n) => Object.fromEntries(Object.entries(readers).map(([k, read]) => [k, ((read as () => number)() - start[k as K]) / n])) as Record<K, number>,
  };
}

/** The child of `pid` whose command line contains `needle` (e.g. the server's spawner), or null. */
export function childPid(pid: number, needle: string): number | null {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    return children.find((c) => readFileSync(`/proc/${c}/cmdline`, "utf8").includes(needle)) ?? null;
  } catch {
    return null;
  }
}
