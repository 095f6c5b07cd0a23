import { describe, expect, test } from "vitest";
import type { TInputMedia } from "../../../plugin-sdk/media";
import { buildContextMedia } from "./context-media";
import { workspaceRelative } from "./workspace-files";

const file = (id: string, name: string, mediaType: string, text: string): TInputMedia => ({ id, name, mediaType, size: text.length, sha256: "ab".repeat(32), bytes: new TextEncoder().encode(text) });

describe("buildContextMedia", () => {
  test("inlines text while it fits, labels what does not, passes images as parts", () => {
    const media = [file("m1", "a.txt", "text/plain", "short"), file("m2", "b.csv", "text/csv", "x".repeat(500)), file("m3", "c.png", "image/png", "PNG"), file("m4", "d.pdf", "application/pdf", "%PDF-")];
    const staged = new Map([["m2", "attachments/b.csv"]]);
    const context = buildContextMedia(media, staged, 300);
    expect(context.text).toContain("short");
    expect(context.text).toContain('"b.csv" (text/csv, 500 B, sha256 abababababab…): not included, its 500 characters do not fit the remaining context budget');
    expect(context.text).toContain("staged at attachments/b.csv in the workspace");
    expect(context.text).not.toContain("x".repeat(50));
    expect(context.text).toContain('"d.pdf" (application/pdf, 5 B, sha256 abababababab…): not readable as text by the model');
    expect(context.images.map((i) => i.name)).toEqual(["c.png"]);
    expect(context.facts.map((f) => Object.keys(f).sort())).toEqual(Array(4).fill(["id", "mediaType", "name", "sha256", "size"]));
    // Deterministic: a resumed run sends the very same context.
    expect(buildContextMedia(media, staged, 300)).toEqual(context);
  });

  test("a zero budget inlines nothing", () => {
    expect(buildContextMedia([file("m1", "a.txt", "text/plain", "hello")], new Map(), 0).text).toMatch(/^\[Attachment "a\.txt".*not included/);
  });
});

describe("workspaceRelative", () => {
  test("keeps relative paths inside, maps the workspace's own absolute paths, refuses the rest", () => {
    expect(workspaceRelative("out/report.txt", "/ws")).toBe("out/report.txt");
    expect(workspaceRelative("./out/../report.txt", "/ws")).toBe("report.txt");
    expect(workspaceRelative("/ws/out/report.txt", "/ws")).toBe("out/report.txt");
    expect(workspaceRelative("/remote/ws/a.txt", "/remote/ws/")).toBe("a.txt");
    for (const outside of ["../a.txt", "out/../../a.txt", "/etc/passwd", "/ws-other/a.txt", "/ws", ".", "", "a\0b"]) expect(workspaceRelative(outside, "/ws"), outside).toBeNull();
    expect(workspaceRelative("/ws/a.txt", undefined)).toBeNull();
  });
});
