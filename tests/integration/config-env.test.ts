import { bootUntilExit } from "../../server/testing/server-process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { ZLiveServerFrame } from "../../server/api/http/live-frames";
import { buildOpenApiDocument } from "../../server/api/http/openapi";
import { loadConfig } from "../../server/config";
import { ZStreamFrame } from "../../server/core/wire-frames";
import { startTestApp } from "../../server/testing/test-app";

const dir = mkdtempSync(join(tmpdir(), "countersign-env-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const badNotify = join(dir, "notify.json");
writeFileSync(badNotify, JSON.stringify({ channels: { hook: { type: "webhook", url: "ftp://x" } } }));

const badAgents = join(dir, "agents.json");
writeFileSync(badAgents, JSON.stringify({ agents: [{ name: "a", harness: "Lang Chain", tools: {} }] }));

/** Each variable with a bad value, and what the error must say besides its name. */
const CASES: Array<[Record<string, string>, string, string]> = [
  [{ PORT: "http" }, "PORT", "number"],
  [{ PORT: "70000" }, "PORT", "65535"],
  [{ DATABASE_URL: "not a url" }, "DATABASE_URL", "URL"],
  [{ COUNTERSIGN_PUBLIC_URL: "localhost:3000" }, "COUNTERSIGN_PUBLIC_URL", "URL"],
  [{ COUNTERSIGN_BOUNDARY_TIMEOUT_MS: "10" }, "COUNTERSIGN_BOUNDARY_TIMEOUT_MS", "1000"],
  [{ COUNTERSIGN_LEASE_MS: "soon" }, "COUNTERSIGN_LEASE_MS", "number"],
  [{ COUNTERSIGN_EXPIRY_SWEEP_MS: "5" }, "COUNTERSIGN_EXPIRY_SWEEP_MS", "100"],
  [{ COUNTERSIGN_DB_POOL: "0" }, "COUNTERSIGN_DB_POOL", "1"],
  [{ LOG_LEVEL: "loud" }, "LOG_LEVEL", "info"],
  [{ COUNTERSIGN_PAGES: "maybe" }, "COUNTERSIGN_PAGES", "off"],
  [{ BETTER_AUTH_SECRET: "short" }, "BETTER_AUTH_SECRET", "32 characters"],
  [{ COUNTERSIGN_RATE_LIMIT: "fast" }, "COUNTERSIGN_RATE_LIMIT", "requests per second"],
  [{ COUNTERSIGN_TRUSTED_PROXIES: "10.0.0.0/99" }, "COUNTERSIGN_TRUSTED_PROXIES", "10.0.0.0/99"],
  [{ COUNTERSIGN_BODY_TIMEOUT_MS: "5" }, "COUNTERSIGN_BODY_TIMEOUT_MS", "1000"],
  [{ COUNTERSIGN_MAX_STREAMS_PER_USER: "many" }, "COUNTERSIGN_MAX_STREAMS_PER_USER", "off"],
  [{ COUNTERSIGN_SECRET_KEY: "c2hvcnQ=" }, "COUNTERSIGN_SECRET_KEY", "32 bytes"],
  [{ COUNTERSIGN_EXEC_SANDBOX: "docker" }, "COUNTERSIGN_EXEC_SANDBOX", "auto, bwrap, user or none"],
  [{ COUNTERSIGN_EXEC_USER: "nobody" }, "COUNTERSIGN_EXEC_USER", "<uid>:<gid>"],
  [{ COUNTERSIGN_EXEC_USER: "0:0" }, "COUNTERSIGN_EXEC_USER", "root"],
  [{ COUNTERSIGN_MCP_SERVERS: "[{" }, "COUNTERSIGN_MCP_SERVERS", "JSON"],
  [{ COUNTERSIGN_MCP_SERVERS: '[{"name":"x"}]' }, "COUNTERSIGN_MCP_SERVERS", "invalid"],
  [{ COUNTERSIGN_MODEL_BASE_URL: "ftp://model" }, "COUNTERSIGN_MODEL_BASE_URL", "http(s)"],
  [{ COUNTERSIGN_MODEL_BASE_URL: "http://127.0.0.1:1/v1", COUNTERSIGN_MODEL_MAX_TURNS: "-1" }, "COUNTERSIGN_MODEL_MAX_TURNS", "positive integer"],
  [{ COUNTERSIGN_MODEL_BASE_URL: "http://127.0.0.1:1/v1", COUNTERSIGN_MODEL_EXEC_APPROVAL: "never" }, "COUNTERSIGN_MODEL_EXEC_APPROVAL", "always or review"],
  [{ COUNTERSIGN_MODEL_BASE_URL: "http://127.0.0.1:1/v1", COUNTERSIGN_MODEL_TIMEOUT_MS: "1.5" }, "COUNTERSIGN_MODEL_TIMEOUT_MS", "positive integer"],
  [{ COUNTERSIGN_REVIEWER: "strict" }, "COUNTERSIGN_REVIEWER", "expected one of"],
  [{ COUNTERSIGN_REVIEWER: "model" }, "COUNTERSIGN_REVIEWER_BASE_URL", "base URL"],
  [{ COUNTERSIGN_REVIEWER_BASE_URL: "http://127.0.0.1:1/v1", COUNTERSIGN_REVIEWER_MODEL: "m", COUNTERSIGN_REVIEWER_TIMEOUT_MS: "fast" }, "COUNTERSIGN_REVIEWER_TIMEOUT_MS", "milliseconds"],
  [{ COUNTERSIGN_REVIEWER_BASE_URL: "http://127.0.0.1:1/v1", COUNTERSIGN_REVIEWER_MODEL: "m", COUNTERSIGN_REVIEWER_RESPONSE_FORMAT: "xml" }, "COUNTERSIGN_REVIEWER_RESPONSE_FORMAT", "expected one of"],
  [{ COUNTERSIGN_MEDIA_RETENTION_DAYS: "0" }, "COUNTERSIGN_MEDIA_RETENTION_DAYS", "number of days above 0"],
  [{ COUNTERSIGN_MEDIA_RETENTION_DAYS: "a month" }, "COUNTERSIGN_MEDIA_RETENTION_DAYS", "unset to keep media"],
  [{ COUNTERSIGN_NOTIFY_CONFIG: join(dir, "missing.json") }, "COUNTERSIGN_NOTIFY_CONFIG", "Cannot read"],
  [{ COUNTERSIGN_NOTIFY_CONFIG: badNotify }, "COUNTERSIGN_NOTIFY_CONFIG", "channels.hook"],
  [{ COUNTERSIGN_AGENTS_FILE: join(dir, "missing.json") }, "COUNTERSIGN_AGENTS_FILE", "Cannot read"],
  [{ COUNTERSIGN_AGENTS_FILE: badAgents }, "COUNTERSIGN_AGENTS_FILE", "agents[0].harness: must be scripted, openai-compatible or the id of an enabled plugin's harness"],
];

/** A clean environment: only the variables of one case (the test runner's own do not leak in). */
const envOf = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, ...vars }) as unknown as NodeJS.ProcessEnv;

test.each(CASES)("%o stops the start naming %s", (vars, name, detail) => {
  let message = "";
  try {
    loadConfig(envOf(vars));
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toContain(name);
  expect(message).toContain(detail);
});

test("valid values and the defaults start", () => {
  const config = loadConfig(envOf({ PORT: "3100", COUNTERSIGN_RATE_LIMIT: "off", COUNTERSIGN_EXEC_SANDBOX: "auto", COUNTERSIGN_MAX_STREAMS_PER_USER: "off", COUNTERSIGN_MEDIA_RETENTION_DAYS: "0.5", COUNTERSIGN_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }));
  expect(config.port).toBe(3100);
  expect(config.rateLimit).toBeNull();
  expect(loadConfig(envOf({})).port).toBe(3000);
});

test("every problem is reported at once", () => {
  expect(() => loadConfig(envOf({ PORT: "x", COUNTERSIGN_EXEC_SANDBOX: "docker", COUNTERSIGN_DB_POOL: "0" }))).toThrow(/PORT.*COUNTERSIGN_DB_POOL.*COUNTERSIGN_EXEC_SANDBOX|PORT.*COUNTERSIGN_EXEC_SANDBOX/);
});

test("the server process exits with the message before it opens anything", async () => {
  const dataDir = mkdtempSync(join(dir, "data-"));
  const { code, output } = await bootUntilExit(envOf({ HOME: process.env.HOME ?? "/tmp", COUNTERSIGN_DATA_DIR: dataDir, COUNTERSIGN_PAGES: "off", PORT: "0", COUNTERSIGN_EXEC_SANDBOX: "docker" }));
  expect(code).toBe(1);
  expect(output).toContain('Invalid COUNTERSIGN_EXEC_SANDBOX "docker"');
}, 300_000);

test("an https COUNTERSIGN_PUBLIC_URL turns on HSTS and Secure session cookies; http does neither", async () => {
  const tls = await startTestApp({ publicUrl: "https://countersign.example.com" });
  const plain = await startTestApp();
  try {
    const local = (app: typeof tls) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    expect((await fetch(`${local(tls)}/v1/healthz`)).headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
    expect((await fetch(`${local(plain)}/v1/healthz`)).headers.get("strict-transport-security")).toBeNull();
    const signIn = async (app: typeof tls) => {
      const user = await app.user("member");
      const res = await fetch(`${local(app)}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: local(app) },
        body: JSON.stringify({ email: user.email, password: user.password }),
      });
      expect(res.status).toBe(200);
      return res.headers.getSetCookie().find((c) => c.includes("session_token=")) ?? "";
    };
    const secure = await signIn(tls);
    expect(secure).toMatch(/^__Secure-/);
    expect(secure).toMatch(/;\s*Secure/i);
    expect(await signIn(plain)).not.toMatch(/;\s*Secure/i);
  } finally {
    await tls.close();
    await plain.close();
  }
}, 400_000);

/** Every file under `root` (recursively) with one of the extensions, tests excluded. */
function sources(root: string, exts: string[]): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) out.push(...sources(path, exts));
    else if (exts.some((e) => entry.name.endsWith(e)) && !entry.name.includes(".test.")) out.push(path);
  }
  return out;
}

test("every environment variable the server and scripts read is in docs/configuration.md", () => {
  const doc = readFileSync("docs/configuration.md", "utf8");
  const names = new Set<string>();
  for (const file of [...sources("server", [".ts"]), ...sources("scripts", [".ts", ".mjs", ".sh"])]) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)|env\.([A-Z][A-Z0-9_]*)|env\[["']([A-Z][A-Z0-9_]*)["']\]|\b(COUNTERSIGN_[A-Z0-9_]+)\b/g)) {
      names.add((m[1] ?? m[2] ?? m[3] ?? m[4]) as string);
    }
  }
  // Names the example notification file uses for its secrets are documented as a class, tests' own as a prefix.
  const classes = [/^COUNTERSIGN_(HOOK|LIFECYCLE|SLACK|SMTP)_/, /^COUNTERSIGN_TEST_/, /^BARE_/];
  const missing = [...names].filter((n) => !n.endsWith("_") && !classes.some((c) => c.test(n)) && !doc.includes(`\`${n}\``));
  expect(missing).toEqual([]);
  expect(names.size).toBeGreaterThan(40);
});

test("every frame type the streams carry is in the wire schema (OpenAPI) and in docs/api.md", () => {
  const api = readFileSync("docs/api.md", "utf8");
  const emitted = new Set<string>();
  for (const file of sources("server", [".ts"])) {
    const text = readFileSync(file, "utf8");
    for (const line of text.split("\n")) {
      if (line.includes("frame: true")) for (const m of line.matchAll(/type: "([a-z_.]+)", data/g)) emitted.add(m[1] as string);
    }
    for (const m of text.matchAll(/\.frame\("([a-z_.]+)"/g)) emitted.add(m[1] as string);
  }
  const live = ZLiveServerFrame.options.map((o) => o.shape.type.value as string);
  const stream = ZStreamFrame.options.map((o) => o.shape.type.value as string);
  expect(emitted.size).toBeGreaterThan(15);
  for (const type of emitted) expect(stream, `${type} is emitted but not in ZStreamFrame`).toContain(type);
  for (const type of [...stream, ...live]) expect(new RegExp(`\`[^\`]*${type.replace(/\./g, "\\.")}[^\`]*\``).test(api), `${type} is not named in docs/api.md`).toBe(true);
  const openapi = JSON.stringify(buildOpenApiDocument([], { version: "test" }));
  for (const type of [...stream, ...live]) expect(openapi, `${type} is not in the OpenAPI document`).toContain(`"${type}"`);
});
