"use client";

import { useTranslations } from "next-intl";
import { operationView, type TOperationPart } from "../server/core/operation-view";
import { ArgsView } from "./args-view";

/** One line of a unified diff, classed by what it does (added, removed, a hunk header, context). */
function diffLineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-ctx";
}

/**
 * A unified diff for people: monospace, each line classed (added green, removed red, headers
 * muted), the text itself unchanged (a `+` or `-` still begins its line).
 */
export function UnifiedDiff({ text, testId }: { text: string; testId?: string }) {
  return (
    <pre className="code op-diff" data-testid={testId}>
      {text.split("\n").map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one fixed diff
        <span key={i} className={diffLineClass(line)}>
          {`${line}\n`}
        </span>
      ))}
    </pre>
  );
}

function Part({ part }: { part: TOperationPart }) {
  const t = useTranslations("operation");
  const name = part.label === "edit" && part.kind === "diff" ? t("edit") : part.label;
  const label = part.edit ? t("ofEdit", { name, index: part.edit.index, of: part.edit.of }) : name;
  if (part.kind === "text") {
    return (
      <div className="op-field" data-testid="op-part" data-kind="text" data-label={part.label}>
        <span className="label">{label}</span> <code>{part.text}</code>
      </div>
    );
  }
  return (
    <div className="op-block" data-testid="op-part" data-kind={part.kind} data-label={part.label}>
      <span className="label">{label}</span>
      {part.kind === "diff" ? (
        <UnifiedDiff text={part.text} />
      ) : (
        <pre className="code">{part.text}</pre>
      )}
    </div>
  );
}

/**
 * The arguments of an approval as the approver should read them. A coding agent's tool
 * (`coding:Bash`, `coding:Edit`, …) is rendered for people: the command with its description and
 * every flag, a write's path and content, an edit's unified diff; every field of the input
 * appears (server/core/operation-view.ts), and the exact JSON stays one click away. Any other
 * action shows its arguments as JSON.
 */
export function OperationArgs({ action, value }: { action: string; value: unknown }) {
  const t = useTranslations("operation");
  if (!action.startsWith("coding:")) return <ArgsView value={value} />;
  const view = operationView(action, value);
  return (
    <div className="op-view" data-testid="operation-view">
      {view.parts.map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed view
        <Part key={i} part={part} />
      ))}
      <details className="op-json">
        <summary>{t("asJson")}</summary>
        <ArgsView value={value} />
      </details>
    </div>
  );
}
