// A vitest reporter for scripts/test-all.sh, beside the json reporter. It writes:
// - to the JSON file named by VITEST_FILE_TIMES, each test file's time: [{ file, project, database,
//   seconds }], seconds being the file's whole time in its worker (its environment, imports, hooks and
//   tests). vitest's own JSON report spans only first test start to last test end, which leaves out a
//   file's beforeAll (starting its servers), often most of it. `node scripts/test-summary.mjs
//   --slowest N` reads it (docs/testing.md);
// - to the JSON file named by VITEST_PROBLEMS, the tests that failed and those that passed only when
//   run again (flaky), each with its file, name and first error line: [{ kind, file, test, error }].
//   The run's closing table lists them, so the end of a CI log says which test failed and why.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";

const firstLine = (error) => String(error?.message ?? error ?? "").split("\n").find((l) => l.trim()) ?? "";

function write(path, rows) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(rows, null, 1)}\n`);
}

export default class FileTimesReporter {
  onTestRunEnd(testModules) {
    const database = process.env.TEST_DB === "postgres" && process.env.TEST_DATABASE_URL ? "PostgreSQL" : "PGlite";
    const times = process.env.VITEST_FILE_TIMES;
    if (times) {
      write(
        times,
        testModules.map((module) => {
          const d = module.diagnostic();
          const ms = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
          return { file: relative(process.cwd(), module.moduleId), project: module.project.name, database, seconds: Math.round(ms) / 1000 };
        }),
      );
    }
    const problemsFile = process.env.VITEST_PROBLEMS;
    if (!problemsFile) return;
    const problems = [];
    for (const module of testModules) {
      const file = relative(process.cwd(), module.moduleId);
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "failed") {
          failedTests++;
          problems.push({ kind: "failed", file, database, test: test.fullName, error: firstLine(result.errors?.[0]) });
        } else if (test.diagnostic()?.flaky) {
          problems.push({ kind: "flaky", file, database, test: test.fullName, error: firstLine(test.task?.result?.errors?.[0]) });
        }
      }
      // A file that failed outside its tests (an import, a beforeAll): its own errors.
      if (failedTests === 0 && module.state() === "failed") {
        problems.push({ kind: "failed", file, database, test: "(the file: imports or hooks)", error: firstLine(module.errors?.()[0]) });
      }
    }
    write(problemsFile, problems);
  }
}
