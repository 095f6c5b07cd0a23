import { type ChildProcess, spawn } from "node:child_process";
import { expect, test } from "@playwright/test";
import { demoCredentials, SIGNED_OUT, screenshot } from "./support";

// The same ports as playwright.config.ts gives the server's notification config.
const PORT = Number(process.env.E2E_PORT ?? 3100);
const SMTP_PORT = PORT + 25;
const SINK_HTTP_PORT = PORT + 26;

type TMail = { to: string[]; subject: string; text: string; html: string };

let sink: ChildProcess;

test.beforeAll(async () => {
  // node itself (not npx): killing it must stop the sink, not only a wrapper.
  sink = spawn(process.execPath, ["--import", "tsx", "tests/fixtures/smtp-sink.ts"], { env: { ...process.env, SINK_SMTP_PORT: String(SMTP_PORT), SINK_HTTP_PORT: String(SINK_HTTP_PORT) }, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    sink.stdout?.once("data", () => resolve());
    sink.once("exit", (code) => reject(new Error(`the SMTP sink exited with ${code}`)));
  });
});
test.afterAll(() => {
  sink?.kill("SIGTERM");
});

/** The mail about one approval (its id is the mail's Reference). */
async function mailFor(approvalId: string): Promise<TMail> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mails = (await (await fetch(`http://127.0.0.1:${SINK_HTTP_PORT}/mails`)).json()) as TMail[];
    const mail = mails.find((m) => m.text.includes(approvalId));
    if (mail) return mail;
    if (Date.now() > deadline) throw new Error(`no mail mentions ${approvalId}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test.describe("signed out", () => {
  test.use({ storageState: SIGNED_OUT });

  test("a high-risk approval is mailed with a single-use link; the recipient approves from it without signing in, and the link then stops working", async ({ page, request }) => {
    const creds = await demoCredentials();
    // A plain path: long random-looking words (like uniqueMarker()) are redacted in notifications.
    const command = "rm -rf ./build-output";
    const res = await request.post("/v1/responses", {
      headers: { authorization: `Bearer ${creds.apiKey}` },
      data: { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command } }] }, { text: "Cleaned." }] } },
    });
    const run = (await res.json()) as { id: string; sessionId: string; requiredAction: { id: string; risk: string } };
    expect(run.requiredAction.risk).toBe("high");

    const mail = await mailFor(run.requiredAction.id);
    expect(mail.to).toEqual(["operator@countersign.local"]);
    const link = mail.text.match(/http:\/\/127\.0\.0\.1:\d+\/l\/[A-Za-z0-9_-]+/)?.[0];
    expect(link, mail.text).toBeTruthy();

    await page.goto(link as string);
    const card = page.getByTestId("link-card");
    await expect(card).toBeVisible();
    await expect(card).toContainText(command);
    await expect(card).toContainText("this link works once");
    await screenshot(page, "notification-link");
    await card.getByRole("button", { name: "Approve" }).click();
    await expect(page.getByTestId("link-outcome")).toContainText("Approved");

    // The run resumes in the background once the link's decision committed.
    await expect
      .poll(async () => {
        const after = await request.get(`/v1/responses/${run.id}?sessionId=${run.sessionId}`, { headers: { authorization: `Bearer ${creds.apiKey}` } });
        return ((await after.json()) as { status: string }).status;
      })
      .toBe("completed");

    // The same link again: refused with a way to sign in, and nothing changes.
    await page.goto(link as string);
    const outcome = page.getByTestId("link-outcome");
    await expect(outcome).toHaveAttribute("data-failed", "true");
    await expect(outcome.getByRole("link", { name: "Sign in to the console" })).toBeVisible();
  });
});

test("the console's Notifications page shows each delivery with its attempts", async ({ page, request }) => {
  const creds = await demoCredentials();
  const res = await request.post("/v1/responses", {
    headers: { authorization: `Bearer ${creds.apiKey}` },
    data: { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: "sudo rm -rf /tmp/cache-dir" } }] }, { text: "Done." }] } },
  });
  expect(res.status()).toBe(200);
  await mailFor(((await res.json()) as { requiredAction: { id: string } }).requiredAction.id);
  await page.goto("/notifications");
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  const row = page.locator('[data-testid="notification-row"][data-status="delivered"]').filter({ hasText: "operator@countersign.local" }).first();
  await expect(row).toBeVisible();
  await row.getByTestId("show-attempts").click();
  await expect(page.getByTestId("attempt-row").first()).toBeVisible();
  await screenshot(page, "notifications-log");
});
