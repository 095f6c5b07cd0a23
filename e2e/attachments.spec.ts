import { expect, test } from "@playwright/test";
import { bearer, demoCredentials } from "./support";

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
  const { readFileSync } = await import("node:fs");
  expect(readFileSync(path, "utf8")).toBe("e2e notes\n");
});
