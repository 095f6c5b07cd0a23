import { createTwoFilesPatch } from "diff";
import { CODING_PREFIX } from "./actions";

/**
 * What a person reads before deciding an operation: the complete arguments of an action, rendered
 * for people. One renderer for every place that shows an approval (the console, Slack, email), so
 * they all show the same thing. Pure: no server state, importable by the console's components.
 *
 * Completeness is the rule: every field of the arguments appears in the view. A coding tool's
 * known fields get their own shape (a write's path and content, an edit's unified diff, a fetch's
 * URL, a command with its description); every other field follows as its own part, so a flag such
 * as `dangerouslyDisableSandbox` is never hidden behind a friendly summary.
 */

/**
 * One piece of the view: a short value on a line, a literal block (a command, a file's content),
 * or a unified diff. `label` is the argument's name (`edit` for an edit's diff); `edit` says which
 * edit of several a part belongs to (a MultiEdit).
 */
export type TOperationPart = { kind: "text" | "code" | "diff"; label: string; text: string; edit?: { index: number; of: number } };

export type TOperationView = {
  /** `Bash`, `Write`, … for a coding tool; the action otherwise. */
  title: string;
  parts: TOperationPart[];
};


const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A value as text: strings as they are, anything else as indented JSON. */
export function valueText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A field that is not one of the renderer's own: a line for short scalars, a block otherwise. */
function fieldPart(label: string, value: unknown): TOperationPart {
  const text = valueText(value);
  const short = (typeof value !== "object" || value === null) && !text.includes("\n") && text.length <= 120;
  return short ? { kind: "text", label, text } : { kind: "code", label, text };
}

/** A unified diff of one replacement in a file (`--- path` / `+++ path`, three lines of context). */
export function unifiedDiff(path: string, before: string, after: string): string {
  // Snippets (an edit's old and new strings) rarely end with a newline: no "No newline" marker for that.
  const bare = !before.endsWith("\n") && !after.endsWith("\n");
  return createTwoFilesPatch(path, path, bare ? `${before}\n` : before, bare ? `${after}\n` : after, undefined, undefined, { context: 3 })
    .split("\n")
    .filter((line) => !line.startsWith("=====") && !line.startsWith("Index: "))
    .join("\n")
    .trimEnd();
}

type TRenderer = (args: Record<string, unknown>, take: (key: string) => unknown) => TOperationPart[];

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The renderers of the coding tools' known fields; what a renderer does not take is shown as its own part. */
const CODING: Record<string, TRenderer> = {
  Bash: (_args, take) => {
    const parts: TOperationPart[] = [];
    const command = take("command");
    parts.push({ kind: "code", label: "command", text: valueText(command ?? "") });
    const description = take("description");
    if (description !== undefined) parts.push(fieldPart("description", description));
    return parts;
  },
  Write: (_args, take) => {
    const path = take("file_path");
    const content = take("content");
    return [fieldPart("file_path", path ?? ""), { kind: "code", label: "content", text: valueText(content ?? "") }];
  },
  Edit: (args, take) => {
    const path = str(args.file_path);
    const before = str(args.old_string);
    const after = str(args.new_string);
    if (path === null || before === null || after === null) return [];
    take("file_path");
    take("old_string");
    take("new_string");
    return [fieldPart("file_path", path), { kind: "diff", label: "edit", text: unifiedDiff(path, before, after) }];
  },
  MultiEdit: (args, take) => {
    const path = str(args.file_path);
    const edits = args.edits;
    if (path === null || !Array.isArray(edits) || !edits.every((e) => isRecord(e) && str(e.old_string) !== null && str(e.new_string) !== null)) return [];
    take("file_path");
    take("edits");
    const parts: TOperationPart[] = [fieldPart("file_path", path)];
    edits.forEach((edit, i) => {
      const e = edit as Record<string, unknown>;
      const which = { index: i + 1, of: edits.length };
      parts.push({ kind: "diff", label: "edit", text: unifiedDiff(path, e.old_string as string, e.new_string as string), edit: which });
      for (const [key, value] of Object.entries(e)) if (key !== "old_string" && key !== "new_string") parts.push({ ...fieldPart(key, value), edit: which });
    });
    return parts;
  },
  NotebookEdit: (_args, take) => {
    const path = take("notebook_path");
    const source = take("new_source");
    return [fieldPart("notebook_path", path ?? ""), ...(source !== undefined ? [{ kind: "code" as const, label: "new_source", text: valueText(source) }] : [])];
  },
  Read: (_args, take) => [fieldPart("file_path", take("file_path") ?? "")],
  Glob: (_args, take) => [fieldPart("pattern", take("pattern") ?? "")],
  Grep: (_args, take) => [fieldPart("pattern", take("pattern") ?? "")],
  WebFetch: (_args, take) => {
    const url = take("url");
    const prompt = take("prompt");
    return [fieldPart("url", url ?? ""), ...(prompt !== undefined ? [{ kind: "code" as const, label: "prompt", text: valueText(prompt) }] : [])];
  },
  WebSearch: (_args, take) => [fieldPart("query", take("query") ?? "")],
  Task: (_args, take) => {
    const description = take("description");
    const prompt = take("prompt");
    return [...(description !== undefined ? [fieldPart("description", description)] : []), { kind: "code" as const, label: "prompt", text: valueText(prompt ?? "") }];
  },
};

/**
 * The view of one operation: for a coding tool (`coding:Bash`, …) its known fields in their own
 * shape, then every other field; for any other action, each argument as its own part (or the whole
 * value as JSON when the arguments are not an object).
 */
export function operationView(action: string, args: unknown): TOperationView {
  const tool = action.startsWith(CODING_PREFIX) ? action.slice(CODING_PREFIX.length) : null;
  if (!isRecord(args)) return { title: tool ?? action, parts: [{ kind: "code", label: "arguments", text: valueText(args) }] };
  const taken = new Set<string>();
  const take = (key: string): unknown => {
    if (!Object.hasOwn(args, key)) return undefined;
    taken.add(key);
    return args[key];
  };
  const renderer = tool !== null && Object.hasOwn(CODING, tool) ? CODING[tool] : undefined;
  const own = renderer ? renderer(args, take) : [];
  const rest = Object.entries(args)
    .filter(([key]) => !taken.has(key))
    .map(([key, value]) => fieldPart(key, value));
  return { title: tool ?? action, parts: [...own, ...rest] };
}

/** A part's label in English (`edit 2 of 3`, `replace_all (edit 2 of 3)`), for text channels. */
export function partLabel(part: TOperationPart): string {
  if (!part.edit) return part.label;
  const which = `edit ${part.edit.index} of ${part.edit.of}`;
  return part.label === "edit" ? which : `${part.label} (${which})`;
}

/** The view as plain text (email, logs): a line per short field, indented blocks for the rest. */
export function operationText(view: TOperationView): string {
  const lines: string[] = [];
  for (const part of view.parts) {
    const label = partLabel(part);
    if (part.kind === "text") lines.push(`${label}: ${part.text}`);
    else lines.push(`${label}:`, ...part.text.split("\n").map((l) => `    ${l}`));
  }
  return lines.join("\n");
}
