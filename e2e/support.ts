import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type APIRequestContext, type Browser, expect, type Locator, type Page } from "@playwright/test";

/** Same directory as the webServer's COUNTERSIGN_DATA_DIR in playwright.config.ts. */
const DATA_DIR = ".data-e2e";
const SCREENSHOTS = "e2e/screenshots";
/** Browser state of a signed-in demo operator, written by auth.setup.ts (inside the fresh data dir). */
export const SIGNED_IN_STATE = join(DATA_DIR, "e2e-signed-in.json");
/** For tests that start signed out. */
export const SIGNED_OUT = { cookies: [], origins: [] };

export type TDemoCredentials = { email: string; password: string; apiKey: string };

/** The demo operator the server creates on first start (written just after it starts listening). */
export async function demoCredentials(): Promise<TDemoCredentials> {
  const file = join(DATA_DIR, "demo-credentials.txt");
  await expect.poll(() => existsSync(file), { message: `${file} was not written`, timeout: 15_000 }).toBe(true);
  const text = readFileSync(file, "utf8");
  const field = (label: string): string => {
    const value = text.match(new RegExp(`^\\s*${label}:\\s*(\\S+)\\s*$`, "m"))?.[1];
    if (!value) throw new Error(`No "${label}" line in ${file}`);
    return value;
  };
  return { email: field("email"), password: field("password"), apiKey: field("API key") };
}

/**
 * Fills and submits the login form like a person would and returns the HTTP status of the
 * sign-in call. Sign-in is rate limited (per address, and per account after failures): a 429
 * shows the server's sentence, waits its Retry-After and tries again.
 */
export async function submitLogin(page: Page, email: string, password: string): Promise<number> {
  if (new URL(page.url()).pathname !== "/login") await page.goto("/login");
  for (let attempt = 0; ; attempt++) {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/auth/sign-in/email"));
    await page.getByRole("button", { name: "Sign in" }).click();
    const res = await answer;
    if (res.status() !== 429 || attempt === 2) return res.status();
    const wait = Number((await res.headerValue("retry-after")) ?? 10);
    await expect(page.locator("#login-error")).toContainText(`${wait} second`);
    await page.waitForTimeout((wait + 0.5) * 1000);
  }
}

/** Signs in and waits to leave the login page. */
export async function signIn(page: Page, creds: { email: string; password: string }): Promise<void> {
  expect(await submitLogin(page, creds.email, creds.password), "sign-in status").toBe(200);
  await page.waitForURL((url) => url.pathname !== "/login");
}

/** Starts a scripted run whose first step asks to run `echo <marker>`; returns the requires_action envelope. */
export async function startEchoRun(request: APIRequestContext, apiKey: string, marker: string) {
  const res = await request.post("/v1/responses", {
    headers: { authorization: `Bearer ${apiKey}` },
    data: {
      input: {
        script: [{ text: "Listing", toolCalls: [{ name: "exec", arguments: { command: `echo ${marker}` } }] }, { text: "Done." }],
      },
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  const envelope = (await res.json()) as { id: string; sessionId: string; status: string; requiredAction?: { type: string; id: string } };
  expect(envelope.status).toBe("requires_action");
  expect(envelope.requiredAction?.type).toBe("human_approval");
  return { responseId: envelope.id, sessionId: envelope.sessionId, approvalId: envelope.requiredAction?.id as string };
}

/** A marker no other run contains. */
export const uniqueMarker = (): string => `e2e-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-marker`;

/** A full-page capture from the top; `viewport: true` captures what is on screen as it is scrolled (sticky elements where a person sees them). */
export async function screenshot(page: Page, name: string, options: { viewport?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  if (options.viewport) {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    return;
  }
  // From the top: a full-page capture of a scrolled page would draw the sticky header mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Authorization header of the demo API key (or another key). */
export const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

export type TQuestionRun = { responseId: string; sessionId: string; questionId: string };

/**
 * Starts a scripted run whose first turn calls a question tool (ask_user, request_secret,
 * request_input, confirm_url) and whose second turn says "done"; returns the waiting question.
 */
export async function startQuestionRun(request: APIRequestContext, apiKey: string, call: { name: string; arguments: Record<string, unknown> }): Promise<TQuestionRun> {
  const res = await request.post("/v1/responses", {
    headers: bearer(apiKey),
    data: { input: { script: [{ toolCalls: [call] }, { text: "done" }] } },
  });
  expect(res.status(), await res.text()).toBe(200);
  const envelope = (await res.json()) as { id: string; sessionId: string; status: string; requiredAction?: { type: string; id: string } };
  expect(envelope.status).toBe("requires_action");
  expect(envelope.requiredAction?.type).toBe("question");
  return { responseId: envelope.id, sessionId: envelope.sessionId, questionId: envelope.requiredAction?.id as string };
}

type TOutputItem = { type: string; name?: string; output?: unknown };
export type TEnvelopeBody = { id: string; status: string; outputText: string; output: TOutputItem[] };

/** GET /v1/responses/{id}?sessionId=… */
export async function getEnvelope(request: APIRequestContext, apiKey: string, run: { responseId: string; sessionId: string }): Promise<TEnvelopeBody> {
  const res = await request.get(`/v1/responses/${run.responseId}?sessionId=${encodeURIComponent(run.sessionId)}`, { headers: bearer(apiKey) });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as TEnvelopeBody;
}

/** Waits until the run completed and returns the output of its tool result for `toolName`. */
export async function completedToolResult(request: APIRequestContext, apiKey: string, run: { responseId: string; sessionId: string }, toolName: string): Promise<unknown> {
  await expect.poll(async () => (await getEnvelope(request, apiKey, run)).status, { message: `response ${run.responseId} did not complete` }).toBe("completed");
  const envelope = await getEnvelope(request, apiKey, run);
  const result = envelope.output.find((i) => i.type === "tool_result" && i.name === toolName);
  expect(result, `no tool_result for ${toolName}`).toBeTruthy();
  return result?.output;
}

/** Calls a Gateway question method over HTTP and returns its payload. */
export async function gateway<T>(request: APIRequestContext, apiKey: string, method: string, params: Record<string, unknown>): Promise<T> {
  const res = await request.post(`/v1/gateway/${method}`, { headers: bearer(apiKey), data: params });
  const body = (await res.json()) as { ok: boolean; payload?: T; error?: unknown };
  expect(body.ok, JSON.stringify(body)).toBe(true);
  return body.payload as T;
}

/** Screenshots at desktop width and at phone width (390 px), then restores the desktop viewport. */
export async function screenshotBoth(page: Page, name: string): Promise<void> {
  const desktop = page.viewportSize() ?? { width: 1280, height: 860 };
  await screenshot(page, name);
  await page.setViewportSize({ width: 390, height: 844 });
  // Nothing may push the page wider than the phone.
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth), { message: `${name}: horizontal overflow at 390 px` }).toBeLessThanOrEqual(390);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(desktop);
}

export type TE2eUser = { userId: string; apiKey: string; email: string; password: string };

/** The demo operator as the console names a person: the display name with the email beside it. */
export const DEMO_OPERATOR = "Demo Operator (operator@countersign.local)";

/** A person as the console names them (server/core/person.ts): `Name (email)`. */
export const personText = (name: string, email: string): string => `${name} (${email})`;

/**
 * Adds a console user with a password and an API key through the CLI (it reaches the running
 * server's data directory). No two users share a display name: when a retried test adds its user
 * again, the second one gets the name with a marker after it (`name` is still found in it).
 */
export function addUser(name: string, role: "member" | "auditor" | "operator" | "admin"): TE2eUser & { name: string } {
  const email = `${role}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}@countersign.local`;
  const password = `pw-${Math.random().toString(36).slice(2)}-long-enough`;
  const add = (shown: string) =>
    execFileSync("npx", ["tsx", "server/cli/main.ts", "user", "add", shown, "--role", role, "--email", email, "--password", password, "--json"], {
      env: { ...process.env, COUNTERSIGN_DATA_DIR: DATA_DIR, DATABASE_URL: "", LOG_LEVEL: "warn" },
      encoding: "utf8",
    });
  let shown = name;
  let out: string;
  try {
    out = add(shown);
  } catch (error) {
    if (!String((error as { stdout?: string }).stdout ?? "").includes("already has the display name")) throw error;
    shown = `${name} ${uniqueMarker()}`;
    out = add(shown);
  }
  const created = JSON.parse(out.trim().split("\n").pop() ?? "{}") as { userId: string; apiKey: string };
  return { ...created, email, password, name: shown };
}

/** A page in a fresh browser context, signed in as `user`. */
export async function signedInPage(browser: Browser, baseURL: string | undefined, user: { email: string; password: string }): Promise<Page> {
  const context = await browser.newContext({ storageState: SIGNED_OUT, baseURL, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await signIn(page, user);
  return page;
}

/** Calls a tRPC mutation from the page's own session (console cookie, same origin), as the console does. */
export async function trpcMutationAsPage(page: Page, path: string, input: unknown): Promise<{ status: number; body: string }> {
  const origin = new URL(page.url()).origin;
  const res = await page.request.post(`/api/trpc/${path}`, { data: input, headers: { origin, "content-type": "application/json" } });
  return { status: res.status(), body: await res.text() };
}

/** POST /v1/responses with a scripted input; returns the first boundary envelope. */
export async function startScript(request: APIRequestContext, apiKey: string, input: unknown, extra: Record<string, unknown> = {}) {
  const res = await request.post("/v1/responses", { headers: bearer(apiKey), data: { input, ...extra } });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { id: string; sessionId: string; status: string; requiredAction?: { type: string; id: string; risk?: string } };
}

/** Selects a pending approval in the inbox (clicks its line) and returns its detail card. */
export async function openApproval(page: Page, approvalId: string): Promise<Locator> {
  const row = page.locator(`[data-testid="inbox-row"][data-approval-id="${approvalId}"]`);
  await row.locator(".inbox-row-main").click();
  await expect(row).toHaveAttribute("data-selected", "true");
  const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
  await expect(card).toBeVisible();
  return card;
}
