import { expect, test } from "vitest";
import { codingAction } from "./actions";
import { operationText, operationView, partLabel } from "./operation-view";

test("a Bash prompt shows the command, its description and every other flag", () => {
  const view = operationView("coding:Bash", { command: "ls -la", description: "List files", timeout: 5000, run_in_background: true, dangerouslyDisableSandbox: true });
  expect(view.title).toBe("Bash");
  expect(view.parts).toEqual([
    { kind: "code", label: "command", text: "ls -la" },
    { kind: "text", label: "description", text: "List files" },
    { kind: "text", label: "timeout", text: "5000" },
    { kind: "text", label: "run_in_background", text: "true" },
    { kind: "text", label: "dangerouslyDisableSandbox", text: "true" },
  ]);
});

test("a Write shows the path and the whole content; an Edit a unified diff; a MultiEdit one diff per edit", () => {
  expect(operationView("coding:Write", { file_path: "/r/a.ts", content: "one\ntwo\n" }).parts).toEqual([
    { kind: "text", label: "file_path", text: "/r/a.ts" },
    { kind: "code", label: "content", text: "one\ntwo\n" },
  ]);
  const edit = operationView("coding:Edit", { file_path: "/r/a.ts", old_string: "a\nb\nc", new_string: "a\nB\nc", replace_all: true });
  expect(edit.parts[1]).toEqual({ kind: "diff", label: "edit", text: "--- /r/a.ts\n+++ /r/a.ts\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c" });
  expect(edit.parts[2]).toEqual({ kind: "text", label: "replace_all", text: "true" });
  const multi = operationView("coding:MultiEdit", { file_path: "/r/b.ts", edits: [{ old_string: "x", new_string: "y" }, { old_string: "p", new_string: "q", replace_all: true }] });
  expect(multi.parts.map((p) => `${p.kind}:${partLabel(p)}`)).toEqual(["text:file_path", "diff:edit 1 of 2", "diff:edit 2 of 2", "text:replace_all (edit 2 of 2)"]);
  // An Edit whose fields are not strings is shown field by field, never dropped.
  expect(operationView("coding:Edit", { file_path: "/r/a.ts", old_string: 1 }).parts.map((p) => p.label)).toEqual(["file_path", "old_string"]);
});

test("any other action shows each argument; nothing is left out; the text form indents blocks", () => {
  const view = operationView("send_email", { to: "a@example.com", body: "line 1\nline 2", tags: ["x"] });
  expect(view).toEqual({
    title: "send_email",
    parts: [
      { kind: "text", label: "to", text: "a@example.com" },
      { kind: "code", label: "body", text: "line 1\nline 2" },
      { kind: "code", label: "tags", text: '[\n  "x"\n]' },
    ],
  });
  expect(operationText(view)).toBe('to: a@example.com\nbody:\n    line 1\n    line 2\ntags:\n    [\n      "x"\n    ]');
  expect(operationView("coding:WebFetch", { url: "https://x.test", prompt: "sum" }).parts.map((p) => p.label)).toEqual(["url", "prompt"]);
});

test("coding tool names: plain identifiers and mcp__<server>__<tool>, nothing else", () => {
  expect(codingAction("Bash")).toEqual({ ok: true, action: "coding:Bash" });
  expect(codingAction("mcp__github__create_issue")).toEqual({ ok: true, action: "coding:mcp__github__create_issue" });
  expect(codingAction("mcp__my-server__do-it")).toEqual({ ok: true, action: "coding:mcp__my-server__do-it" });
  for (const bad of ["rm -rf", "9lives", "mcp__github", "mcp____x", "Bash;ls", "", `A${"b".repeat(130)}`]) expect(codingAction(bad).ok, bad).toBe(false);
});
