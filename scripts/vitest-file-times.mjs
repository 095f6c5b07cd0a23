// A vitest reporter that writes each test file's time to the JSON file named by VITEST_FILE_TIMES:
// [{ file, project, database, seconds }], seconds being the file's whole time in its worker (its
// environment, imports, hooks and tests). vitest's own JSON report spans only first test start to
// last test end, which leaves out a file's beforeAll (starting its servers), often most of it.
// scripts/test-all.sh adds it beside the json reporter; `node scripts/test-summary.mjs --slowest N`
// reads what it writes (docs/testing.md).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";

export default class FileTimesReporter {
  onTestRunEnd(testModules) {
    const out = process.env.VITEST_FILE_TIMES;
    if (!out) return;
    const database = process.env.TEST_DB === "postgres" && process.env.TEST_DATABASE_URL ? "PostgreSQL" : "PGlite";
    const rows = testModules.map((module) => {
      const d = module.diagnostic();
      const ms = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
      return { file: relative(process.cwd(), module.moduleId), project: module.project.name, database, seconds: Math.round(ms) / 1000 };
    });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(rows, null, 1)}\n`);
  }
}
