import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "@playwright/test";

/** End-to-end tests of the operator console against the real server (run `npm run build` first). */
const PORT = Number(process.env.E2E_PORT ?? 3100);
const E2E_DATA_DIR = ".data-e2e";

/**
 * Notifications in the end-to-end run: high-risk approvals are mailed to the demo operator
 * through an SMTP sink that e2e/notify-link.spec.ts starts on this port (its HTTP side on PORT + 26) (until then,
 * deliveries fail and are retried, as they would against a mail server that is down).
 */
const E2E_SMTP_PORT = PORT + 25;
const NOTIFY_CONFIG = join(tmpdir(), `countersign-e2e-notify-${PORT}.json`);
/**
 * Single sign-on in the end-to-end run: e2e/sso.spec.ts starts a real OpenID provider on this port
 * while it runs (until then the server says the provider cannot be reached); passwords stay on for
 * the other specs.
 */
const E2E_OIDC_PORT = PORT + 27;
writeFileSync(
  NOTIFY_CONFIG,
  JSON.stringify({
    publicUrl: `http://127.0.0.1:${PORT}`,
    smtp: { host: "127.0.0.1", port: E2E_SMTP_PORT, from: "Countersign <countersign@e2e.local>" },
    channels: { mail: { type: "email" } },
    groups: { approvers: ["operator@countersign.local"] },
    rules: [{ kinds: ["approval"], risks: ["high"], notify: ["approvers"], channels: ["mail"] }],
    retry: { baseMs: 250, maxAttempts: 12, jitter: false },
    pollMs: 1000,
  }),
);

export default defineConfig({
  testDir: "./e2e",
  // A subfolder: Playwright empties its outputDir, and scripts/test-all.sh keeps other results in test-results/.
  outputDir: "test-results/e2e",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  // scripts/test-all.sh sets TEST_RETRY=1 (as vitest.config.ts reads it): a test that passes only
  // when run again is listed as flaky in the run's closing table.
  retries: Number(process.env.TEST_RETRY ?? (process.env.CI ? 1 : 0)),
  reporter: process.env.CI ? [["list"], ["html", { open: "never" }]] : "list",
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: "chromium",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    viewport: { width: 1280, height: 860 },
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [
    { name: "setup", testMatch: /auth\.setup\.ts$/ },
    {
      name: "console",
      testMatch: /\.spec\.ts$/,
      dependencies: ["setup"],
      use: { storageState: `${E2E_DATA_DIR}/e2e-signed-in.json` },
    },
  ],
  webServer: {
    // Uses the production build from `npm run build`; a fresh data directory each run.
    command: `rm -rf ${E2E_DATA_DIR} && npx tsx server/main.ts`,
    url: `http://127.0.0.1:${PORT}/v1/healthz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      COUNTERSIGN_DATA_DIR: E2E_DATA_DIR,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      LOG_LEVEL: "warn",
      DATABASE_URL: "",
      COUNTERSIGN_PUBLIC_URL: `http://127.0.0.1:${PORT}`,
      COUNTERSIGN_NOTIFY_CONFIG: NOTIFY_CONFIG,
      COUNTERSIGN_OIDC_ISSUER: `http://127.0.0.1:${E2E_OIDC_PORT}`,
      COUNTERSIGN_OIDC_CLIENT_ID: "countersign-test",
      COUNTERSIGN_OIDC_CLIENT_SECRET: "a-client-secret-long-enough-for-hs256-0123456789",
      COUNTERSIGN_OIDC_ROLE_MAP: JSON.stringify({ operator: ["e2e-operators"] }),
      COUNTERSIGN_OIDC_NAME: "E2E SSO",
    },
  },
});
