/**
 * Process-table helpers (Linux /proc, with a portable fallback) shared by the server and the
 * command spawner (server/tools/spawner-process.mjs). Plain JavaScript with node: built-ins only,
 * so the spawner can load it without a TypeScript loader; types in proc.d.mts.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Whether this system has a Linux-style /proc (marker scans and zombie checks need it). */
export const HAS_PROC = existsSync("/proc/self/stat");

/** Calls `test` with the contents of /proc/<pid>/<file> for each readable process; stops when it returns true. */
export function scanProc(file, test) {
  let entries = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let content;
    try {
      content = readFileSync(`/proc/${entry}/${file}`, "latin1");
    } catch {
      continue; // Processes owned by others or exiting mid-scan are expected.
    }
    if (test(Number(entry), content)) return;
  }
}

/**
 * The state letter and process group of a /proc/<pid>/stat line. comm may contain spaces or
 * parens, so the fields are read from the last ')': "state ppid pgrp ...".
 */
export function statFields(stat) {
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, pgrp: Number(pgrp) };
}

/** True if any non-zombie process is in the group. */
export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return err.code === "EPERM";
  }
  if (!HAS_PROC) return true;
  // kill(0) also counts zombies, which can linger for seconds when PID 1 reaps orphans lazily.
  let alive = false;
  scanProc("stat", (_pid, stat) => {
    const { state, pgrp } = statFields(stat);
    alive = state !== "Z" && pgrp === pgid;
    return alive;
  });
  return alive;
}

/** Sends `sig` to the whole process group; a group that is already gone is the goal anyway. */
export function signalGroup(pgid, sig) {
  try {
    process.kill(-pgid, sig);
  } catch {}
}
