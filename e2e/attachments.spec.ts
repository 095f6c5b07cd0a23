import { readFileSync } from "node:fs";
import { expect, type Locator, test } from "@playwright/test";
import { bearer, demoCredentials, openApproval, SIGNED_OUT, screenshot, uniqueMarker } from "./support";

/** A 4×4 red PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==";

test("the response page previews an image attachment and downloads the files", async ({ page, request }) => {
  const creds = await demoCredentials();
  const res = await request.post("/v1/responses", {
    headers: bearer(creds.apiKey),
    data: {
      input: { script: [{ text: "Here is the chart and the notes.", replyAttachments: ["attachments/chart.png", "attachments/notes.txt", "../outside.txt"] }] },
      attachments: [
        { name: "chart.png", mediaType: "image/png", data: PNG },
        { name: "notes.txt", mediaType: "text/plain", data: Buffer.from("e2e notes\n").toString("base64") },
      ],
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  const env = (await res.json()) as { id: string; status: string; output: Array<{ type: string; name?: string }> };
  expect(env.status).toBe("completed");
  expect(env.output.filter((i) => i.type === "attachment").map((i) => i.name)).toEqual(["chart.png", "notes.txt"]);

  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  await page.goto(`/responses/${env.id}`);
  await expect(page.getByTestId("status").first()).toHaveAttribute("data-status", "completed", { timeout: 30_000 }).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${problems.join("\n")}`);
  });
  await expect(page.getByTestId("output-text")).toContainText("Here is the chart and the notes.");
  // The files the run was given, and the files the agent attached to its answer.
  await expect(page.getByTestId("given-files").getByTestId("attachment")).toHaveCount(2);
  const replied = page.locator("ol.items").getByTestId("attachment");
  await expect(replied).toHaveCount(2);
  const preview = replied.first().getByTestId("attachment-preview");
  await expect(preview).toBeVisible();
  await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(4);
  await expect(page.getByTestId("attachment-failure")).toContainText("outside the workspace");

  const [download] = await Promise.all([page.waitForEvent("download"), replied.nth(1).getByTestId("attachment-download").click()]);
  expect(download.suggestedFilename()).toBe("notes.txt");
  const path = await download.path();
  expect(readFileSync(path, "utf8")).toBe("e2e notes\n");
});

/** The image has loaded from the server: a 4-pixel-wide picture, not a broken image. */
const expectLoaded = (preview: Locator) => expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBe(4);

test("the inbox shows the run's image preview and downloads its files", async ({ page, request }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const res = await request.post("/v1/responses", {
    headers: bearer(creds.apiKey),
    data: {
      input: { script: [{ text: "Checking the chart.", toolCalls: [{ name: "exec", arguments: { command: `echo ${marker}` } }] }, { text: "Done." }] },
      attachments: [
        { name: "chart.png", mediaType: "image/png", data: PNG },
        { name: "inbox-notes.txt", mediaType: "text/plain", data: Buffer.from("inbox notes\n").toString("base64") },
      ],
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  const env = (await res.json()) as { status: string; requiredAction?: { type: string; id: string } };
  expect(env.status).toBe("requires_action");

  await page.goto("/approvals");
  const card = await openApproval(page, env.requiredAction?.id as string);
  const files = card.getByTestId("run-files").getByTestId("attachment");
  await expect(files).toHaveCount(2);
  await expect(files.first()).toContainText("chart.png");
  await expect(files.first()).toContainText("image/png");
  await expectLoaded(files.first().getByTestId("attachment-preview"));
  // A text file is a download only.
  await expect(files.nth(1).getByTestId("attachment-preview")).toHaveCount(0);
  await screenshot(page, "inbox-attachments");

  const [notes] = await Promise.all([page.waitForEvent("download"), files.nth(1).getByTestId("attachment-download").click()]);
  expect(notes.suggestedFilename()).toBe("inbox-notes.txt");
  expect(readFileSync(await notes.path(), "utf8")).toBe("inbox notes\n");
  const [image] = await Promise.all([page.waitForEvent("download"), files.first().getByTestId("attachment-download").click()]);
  expect(image.suggestedFilename()).toBe("chart.png");
  expect(readFileSync(await image.path()).toString("base64")).toBe(PNG);

  await card.getByRole("button", { name: "Approve" }).click();
  await expect(card).toBeHidden();
});

test("a question's answer page, opened from its link, shows the image the run was given", async ({ browser, request, baseURL }) => {
  const creds = await demoCredentials();
  const marker = uniqueMarker();
  const ask = { name: "ask_user", arguments: { questions: [{ id: "ok", header: "Chart", question: `Is this chart right? (${marker})`, options: [{ label: "yes" }, { label: "no" }] }] } };
  const res = await request.post("/v1/responses", {
    headers: bearer(creds.apiKey),
    data: { input: { script: [{ text: "Please look at the chart.", toolCalls: [ask] }, { text: "done" }] }, attachments: [{ name: "chart.png", mediaType: "image/png", data: PNG }] },
  });
  expect(res.status(), await res.text()).toBe(200);
  const env = (await res.json()) as { status: string; requiredAction?: { type: string; id: string } };
  expect(env.requiredAction?.type).toBe("question");
  const questionId = env.requiredAction?.id as string;

  // Signed out, through the link: its cookie is what the file route accepts.
  const context = await browser.newContext({ storageState: SIGNED_OUT, baseURL });
  const page = await context.newPage();
  await page.goto(`/answer/${questionId}?access_token=${encodeURIComponent(creds.apiKey)}`);
  await expect(page.getByTestId("answering-as")).toContainText("Demo Operator");
  const files = page.getByTestId("question-context").getByTestId("attachment");
  await expect(files).toHaveCount(1);
  const preview = files.first().getByTestId("attachment-preview");
  await expect(preview).toHaveAttribute("src", new RegExp(`^/api/answer/${questionId}/files/media_`));
  await expectLoaded(preview);
  await screenshot(page, "answer-attachments");

  // The same file is nothing to a browser without the link or a session.
  const stranger = await browser.newContext({ storageState: SIGNED_OUT, baseURL });
  const refused = await stranger.request.get((await preview.getAttribute("src")) as string);
  expect(refused.status()).toBe(401);
  await stranger.close();

  await page.getByRole("radio", { name: "yes" }).check();
  await page.getByRole("button", { name: /^Send/ }).click();
  await expect(page.getByTestId("outcome")).toHaveAttribute("data-status", "answered");
  await context.close();
});
