import { defineConfig } from "vitest/config";

/**
 * scripts/test-all.sh sets TEST_RETRY=1: a failed test is run once more, and the run's closing table
 * lists every test that passed only then as flaky (a defect to fix, docs/testing.md). Run alone, a
 * failure is a failure.
 */
const retry = Number(process.env.TEST_RETRY ?? 0);

/**
 * Integration files that run on PGlite only, whose outcome does not depend on the database: the
 * role matrices over every procedure and route (the services' authorization code), the exec
 * sandbox's confinement, the client packages driven over the wire, the OpenAPI document and the
 * refusals' reason codes. The queries under them run on both databases in every other file; on
 * PostgreSQL these would add about three minutes to CI and prove nothing new (docs/testing.md).
 */
const PGLITE_ONLY = [
  "tests/integration/console-roles.test.ts",
  "tests/integration/security-authz-matrix.test.ts",
  "tests/integration/exec-confinement.test.ts",
  "tests/integration/openapi.test.ts",
  "tests/integration/i18n-refusals.test.ts",
];

export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["server/**/*.test.ts", "components/**/*.test.ts", "i18n/**/*.test.ts", "scripts/**/*.test.ts"], environment: "node", testTimeout: 20_000, retry } },
      {
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          exclude: process.env.TEST_DB === "postgres" ? PGLITE_ONLY : [],
          environment: "node",
          testTimeout: 60_000,
          // A file's beforeAll may start several server processes: on a loaded 2-core machine that
          // has taken over a minute. The bound only ends a hung start; nothing waits for it otherwise.
          hookTimeout: 120_000,
          fileParallelism: false,
          // One worker runs the files one after another and keeps its imported modules: the server's
          // modules load once, not once per file (that was about a fifth of the suite's time). Every
          // file still opens its own database and servers; what a file sets in process.env is put
          // back when it ends (tests/setup/restore-env.ts).
          isolate: false,
          setupFiles: ["tests/setup/restore-env.ts"],
          retry,
        },
      },
      {
        test: {
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          retry,
        },
      },
      {
        test: {
          name: "replicas",
          include: ["tests/replicas/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          retry,
        },
      },
    ],
  },
});
