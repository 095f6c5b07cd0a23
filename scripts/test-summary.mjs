// Summarizes the test runners' JSON reports (vitest's --reporter=json, Playwright's json reporter).
//
//   node scripts/test-summary.mjs REPORT.json…
//     one closing line, "N passed, N failed, N skipped"; exits 1 when a test failed.
//   node scripts/test-summary.mjs --lanes test-results/lanes.jsonl [--total-seconds S] [--budget-minutes M]
//     what scripts/test-all.sh prints at its end: a table of each lane and its parts (wall minutes,
//     passed/failed/skipped, status), the lanes that failed, the total minutes against the budget,
//     then the closing line over the parts' reports; exits 1 when a part or a test failed.
//     lanes.jsonl has one JSON line per timed part: {lane, part, seconds, status, report}.
//   node scripts/test-summary.mjs --slowest 20 test-results/times-*.json test-results/playwright.json
//     a markdown table of the slowest test files: file, project / database, seconds (docs/testing.md).
//     It reads the file times scripts/vitest-file-times.mjs writes, Playwright's JSON report, and
//     (less exact: without each file's beforeAll) vitest's JSON report.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** The lanes and parts scripts/test-all.sh runs, in the order it prints them; a part with no line did not run. */
const KNOWN = [
  { lane: "setup", parts: ["install", "checks"] },
  { lane: "pglite", parts: ["unit+integration", "replicas", "faults", "bench"] },
  { lane: "postgres", parts: ["integration", "build", "end-to-end"] },
];

function readReport(file) {
  if (!file || !existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** passed/failed/skipped of one report, or null when there is none. */
function counts(report) {
  if (!report) return null;
  if ("numPassedTests" in report) {
    return {
      passed: report.numPassedTests,
      // A file that fails to load fails no test but fails the run: count it.
      failed: report.numFailedTests + (report.numFailedTests === 0 ? (report.numFailedTestSuites ?? 0) : 0),
      skipped: report.numPendingTests + (report.numTodoTests ?? 0),
    };
  }
  if (report.stats) {
    return {
      passed: report.stats.expected + (report.stats.flaky ?? 0),
      failed: report.stats.unexpected,
      skipped: report.stats.skipped,
    };
  }
  return null;
}

function add(total, c) {
  if (!c) return;
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
}

const closingLine = (t) => `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;
const minutes = (seconds) => (seconds / 60).toFixed(1);

function option(args, name) {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  args.splice(at, 2);
  return value;
}

function lanesTable(lanesFile, totalSeconds, budgetMinutes) {
  const records = existsSync(lanesFile)
    ? readFileSync(lanesFile, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line))
    : [];
  const lanes = KNOWN.map((known) => ({ lane: known.lane, parts: known.parts.map((part) => ({ part })) }));
  for (const record of records) {
    let lane = lanes.find((l) => l.lane === record.lane);
    if (!lane) {
      lane = { lane: record.lane, parts: [] };
      lanes.push(lane);
    }
    let part = lane.parts.find((p) => p.part === record.part);
    if (!part) {
      part = { part: record.part };
      lane.parts.push(part);
    }
    Object.assign(part, record, { counts: counts(readReport(record.report)) });
  }

  const rows = [["lane / part", "minutes", "passed", "failed", "skipped", "status"]];
  const total = { passed: 0, failed: 0, skipped: 0 };
  const failedLanes = [];
  let anyFailed = false;
  const cells = (name, seconds, c, status) => [
    name,
    seconds === undefined ? "-" : minutes(seconds),
    c ? String(c.passed) : "-",
    c ? String(c.failed) : "-",
    c ? String(c.skipped) : "-",
    status,
  ];
  for (const lane of lanes) {
    const ran = lane.parts.filter((p) => p.status === "passed" || p.status === "failed");
    const seconds = ran.length ? ran.reduce((sum, p) => sum + (p.seconds ?? 0), 0) : undefined;
    const withCounts = lane.parts.filter((p) => p.counts);
    const laneCounts = withCounts.length ? { passed: 0, failed: 0, skipped: 0 } : null;
    for (const p of withCounts) add(laneCounts, p.counts);
    add(total, laneCounts);
    const failed = lane.parts.some((p) => p.status === "failed" || (p.counts?.failed ?? 0) > 0);
    if (failed) {
      failedLanes.push(lane.lane);
      anyFailed = true;
    }
    const status = failed
      ? "FAILED"
      : ran.length === lane.parts.length
        ? "passed"
        : ran.length > 0
          ? lane.parts.every((p) => ran.includes(p) || p.status === "skipped")
            ? "passed (some parts skipped)"
            : "incomplete"
          : lane.parts.every((p) => p.status === "skipped")
            ? "skipped"
            : "not run";
    rows.push(cells(lane.lane, seconds, laneCounts, status));
    if (lane.parts.length > 1) {
      for (const p of lane.parts) {
        const partStatus = p.status === undefined ? "not run" : (p.counts?.failed ?? 0) > 0 ? "failed" : p.status;
        const timed = p.status === "passed" || p.status === "failed";
        rows.push(cells(`  ${p.part}`, timed ? p.seconds : undefined, p.counts, partStatus));
      }
    }
  }
  if (totalSeconds !== undefined) {
    const over = budgetMinutes !== undefined && totalSeconds / 60 > budgetMinutes;
    rows.push(
      cells(
        "total (wall)",
        totalSeconds,
        total,
        budgetMinutes === undefined ? "" : `${over ? "OVER the" : "within the"} ${budgetMinutes}-minute budget`,
      ),
    );
  }

  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((cell, i) => (i === 0 || i === r.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  console.log("");
  console.log("== test run: lanes (the setup, then pglite beside postgres)");
  for (const r of rows) console.log(line(r));
  if (failedLanes.length) console.log(`== FAILED lanes: ${failedLanes.join(", ")}`);
  printProblems(dirname(lanesFile));
  console.log(closingLine(total));
  return anyFailed || total.failed > 0;
}

/** Playwright's failed and flaky tests, as scripts/vitest-file-times.mjs lists vitest's. */
function playwrightProblems(suites, into) {
  for (const suite of suites ?? []) {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        if (test.status !== "unexpected" && test.status !== "flaky") continue;
        const error = (test.results ?? []).map((r) => r.error?.message).find(Boolean) ?? "";
        into.push({ kind: test.status === "flaky" ? "flaky" : "failed", file: `e2e/${spec.file ?? suite.file}`, database: "Chromium", test: spec.title, error: error.split("\n").find((l) => l.trim()) ?? "" });
      }
    }
    playwrightProblems(suite.suites, into);
  }
}

/**
 * The tests that failed, and those that passed only when run again (test-all.sh runs a failed test
 * once more): file, database, name and first error line, read from the problems-*.json files
 * (scripts/vitest-file-times.mjs) and Playwright's report in the results folder.
 */
function printProblems(folder) {
  const problems = [];
  if (existsSync(folder)) {
    for (const name of readdirSync(folder).filter((n) => /^problems-.*\.json$/.test(n)).sort()) problems.push(...(readReport(join(folder, name)) ?? []));
  }
  playwrightProblems(readReport(join(folder, "playwright.json"))?.suites, problems);
  for (const kind of ["failed", "flaky"]) {
    const list = problems.filter((p) => p.kind === kind);
    if (!list.length) continue;
    console.log(kind === "failed" ? `== failed tests (${list.length})` : `== flaky tests (${list.length}): failed, then passed when run again; each is a defect to fix`);
    for (const p of list) console.log(`  ${p.file} (${p.database}) › ${p.test}${p.error ? `\n      ${p.error.slice(0, 300)}` : ""}`);
  }
}

/** The database a report ran on, from its file name as scripts/test-all.sh writes it. */
function databaseOf(reportFile) {
  if (/playwright/.test(reportFile)) return "Chromium";
  if (/pglite/.test(reportFile)) return "PGlite";
  if (/postgres|replicas|faults/.test(reportFile)) return "PostgreSQL";
  return "";
}

/** The vitest project (or e2e) of a test file, from its folder (vitest.config.ts). */
function projectOf(file) {
  if (file.startsWith("e2e/")) return "e2e";
  const folder = /^tests\/([^/]+)\//.exec(file);
  return folder ? folder[1] : "unit";
}

/** Seconds each spec file of a Playwright report took: the sum of its tests' attempts. */
function playwrightFiles(suites, into) {
  for (const suite of suites ?? []) {
    for (const spec of suite.specs ?? []) {
      const file = spec.file ?? suite.file;
      let ms = 0;
      for (const test of spec.tests ?? []) for (const result of test.results ?? []) ms += result.duration ?? 0;
      into.set(file, (into.get(file) ?? 0) + ms);
    }
    playwrightFiles(suite.suites, into);
  }
}

function slowest(limit, files) {
  const rows = [];
  for (const reportFile of files) {
    const report = readReport(reportFile);
    if (!report) continue;
    const database = databaseOf(reportFile);
    if (Array.isArray(report)) {
      // scripts/vitest-file-times.mjs: each file's whole time in its worker.
      for (const r of report) rows.push({ file: r.file, where: r.project === "unit" ? "unit" : `${r.project} / ${r.database}`, seconds: r.seconds });
    } else if (Array.isArray(report.testResults)) {
      // vitest's JSON report: first test start to last test end (a file's beforeAll is not in it).
      for (const result of report.testResults) {
        const file = relative(process.cwd(), result.name);
        const project = projectOf(file);
        const ms = (result.endTime ?? 0) - (result.startTime ?? 0);
        rows.push({ file, where: project === "unit" ? "unit" : `${project} / ${database}`, seconds: ms / 1000 });
      }
    } else if (report.suites) {
      const perFile = new Map();
      playwrightFiles(report.suites, perFile);
      for (const [file, ms] of perFile) rows.push({ file: `e2e/${file}`, where: `e2e / ${database}`, seconds: ms / 1000 });
    }
  }
  rows.sort((a, b) => b.seconds - a.seconds);
  console.log("| # | file | project / database | seconds |");
  console.log("| ---: | --- | --- | ---: |");
  rows.slice(0, limit).forEach((r, i) => {
    console.log(`| ${i + 1} | \`${r.file}\` | ${r.where} | ${r.seconds.toFixed(1)} |`);
  });
}

const args = process.argv.slice(2);
const slowestCount = option(args, "--slowest");
const lanesFile = option(args, "--lanes");
const totalSeconds = option(args, "--total-seconds");
const budgetMinutes = option(args, "--budget-minutes");

if (slowestCount !== undefined) {
  slowest(Number(slowestCount), args);
} else if (lanesFile !== undefined) {
  const failed = lanesTable(
    lanesFile,
    totalSeconds === undefined ? undefined : Number(totalSeconds),
    budgetMinutes === undefined ? undefined : Number(budgetMinutes),
  );
  process.exit(failed ? 1 : 0);
} else {
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const file of args) add(total, counts(readReport(file)));
  console.log(closingLine(total));
  process.exit(total.failed > 0 ? 1 : 0);
}
