import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type APIRequestContext, expect, type Page } from "@playwright/test";

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
 * sign-in call. Sign-in is rate limited (3 per 10 s per address): a 429 waits and tries again.
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
    await expect(page.locator("#login-error")).toContainText("Too many sign-in attempts");
    const wait = Number((await res.headerValue("x-retry-after")) ?? 10);
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

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
