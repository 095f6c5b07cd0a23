"use client";

import { useTranslations } from "next-intl";
import { useState } from "react";
import type { TOutputItemView as TOutputItem } from "./api-types";
import { JsonView, toPrettyJson } from "./json-view";

type TExecResult = { exitCode?: unknown; stdout?: unknown; stderr?: unknown };

const isExecResult = (v: unknown): v is TExecResult =>
  typeof v === "object" && v !== null && ("stdout" in v || "stderr" in v) && "exitCode" in v;

type TApproverEdit = { requestedArguments?: unknown; arguments?: unknown };
const approverEditOf = (v: unknown): TApproverEdit | null =>
  typeof v === "object" && v !== null && "approverEdit" in v && typeof (v as { approverEdit: unknown }).approverEdit === "object"
    ? ((v as { approverEdit: TApproverEdit }).approverEdit ?? null)
    : null;

/** An approver changed the arguments before approving: say so, with what the agent asked. */
function EditNotice({ edit }: { edit: TApproverEdit }) {
  const t = useTranslations("output");
  return (
    <div className="reviewer-note" data-testid="approver-edit">
      <strong>{t("edited")}</strong>
      {t("requested")}
      <code>{JSON.stringify(edit.requestedArguments)}</code>
      {t("ran")}
      <code>{JSON.stringify(edit.arguments)}</code>
    </div>
  );
}

function ToolOutput({ output }: { output: unknown }) {
  const t = useTranslations("output");
  const edit = approverEditOf(output);
  if (edit) {
    const { approverEdit: _, ...rest } = output as Record<string, unknown>;
    return (
      <>
        <EditNotice edit={edit} />
        <ToolOutput output={rest} />
      </>
    );
  }
  if (!isExecResult(output)) return <JsonView value={output} />;
  const stdout = typeof output.stdout === "string" ? output.stdout : toPrettyJson(output.stdout ?? "");
  const stderr = typeof output.stderr === "string" ? output.stderr : toPrettyJson(output.stderr ?? "");
  return (
    <div className="terminal">
      <div className="terminal-head">{t("exitCode", { code: String(output.exitCode) })}</div>
      {stdout ? (
        <pre className="terminal-out">
          {stdout}
        </pre>
      ) : null}
      {stderr ? (
        <pre className="terminal-err">
          {stderr}
        </pre>
      ) : null}
      {!stdout && !stderr ? <pre className="terminal-out muted">{t("noOutput")}</pre> : null}
    </div>
  );
}

function Item({ item }: { item: TOutputItem }) {
  const t = useTranslations("output");
  switch (item.type) {
    case "message":
      return (
        <div className="item item-message">
          <div className="item-kind">{t("message")}</div>
          <p className="prose">{item.content.map((c) => c.text).join("")}</p>
        </div>
      );
    case "thinking":
      return (
        <details className="item item-thinking">
          <summary className="item-kind">{t("thinking")}</summary>
          <p className="prose muted">{item.text}</p>
        </details>
      );
    case "tool_call":
      return (
        <div className="item item-tool" data-testid="tool-call">
          <div className="item-kind">
            {t("toolCall")} · <code>{item.name}</code> <span className="muted small">{item.id}</span>
          </div>
          <JsonView value={item.arguments} />
        </div>
      );
    case "tool_result":
      return (
        <div className="item item-result" data-testid="tool-result">
          <div className="item-kind">
            {t("toolResult")} · <code>{item.name}</code> <span className="muted small">{item.callId}</span>
          </div>
          <ToolOutput output={item.output} />
        </div>
      );
    case "attachment":
      return <AttachmentItem file={item} />;
    case "attachment_failure":
      return (
        <div className="item item-attachment-failure" data-testid="attachment-failure">
          <div className="item-kind">
            {t("attachmentFailed")} · <code>{item.path}</code>
          </div>
          <p className="prose muted">{item.message}</p>
        </div>
      );
    case "output":
      return (
        <div className="item">
          <div className="item-kind">{t("output")}</div>
          <JsonView value={item.value} />
        </div>
      );
  }
}

const PREVIEWABLE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** "812 B", "14.2 KiB", "3.1 MiB". */
export const formatSize = (n: number): string => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/**
 * A file of a response: a preview for raster images, a download link for every file (served by
 * `/v1` to this console session, which must be allowed to read the response; SVG and HTML only as downloads).
 */
export function AttachmentItem({ file }: { file: { name: string; mediaType: string; size: number; url: string } }) {
  const t = useTranslations("output");
  return (
    <div className="item item-attachment" data-testid="attachment">
      <div className="item-kind">
        {t("attachment")} · <code>{file.name}</code>{" "}
        <span className="muted small">
          {file.mediaType} · {formatSize(file.size)}
        </span>
      </div>
      {PREVIEWABLE.has(file.mediaType) ? (
        // biome-ignore lint/performance/noImgElement: a stored file served by /v1, not a static asset for next/image
        <img className="attachment-preview" src={file.url} alt={file.name} data-testid="attachment-preview" />
      ) : null}
      <a className="btn btn-quiet" href={file.url} download={file.name} data-testid="attachment-download">
        {t("download", { name: file.name })}
      </a>
    </div>
  );
}

type TFile = { id: string; name: string; mediaType: string; size: number; url: string };

/** Files side by side, each an {@link AttachmentItem}. */
export function AttachmentList({ files }: { files: readonly TFile[] }) {
  return (
    <div className="attachment-list">
      {files.map((file, i) => (
        // A run may be given the same stored file twice (even under one name); the list is a fixed snapshot.
        // biome-ignore lint/suspicious/noArrayIndexKey: fixed order, no stable key of its own
        <AttachmentItem key={i} file={file} />
      ))}
    </div>
  );
}

/**
 * The files of a run so far (those it was given, then those its agent attached), where a person
 * decides something about the run: the inbox's approval card and the answer page. Each server
 * read gives the URL the viewer may fetch (`/v1` for the console, the answer page's own route).
 */
export function RunFiles({ files }: { files: readonly TFile[] }) {
  const t = useTranslations("output");
  if (files.length === 0) return null;
  return (
    <section className="run-files" aria-label={t("runFiles")} data-testid="run-files">
      <span className="label">{t("runFiles")}</span>
      <AttachmentList files={files} />
    </section>
  );
}

const FIRST = 100;

/** The envelope's output items, each rendered for reading (the first 100, then all on request). */
export function OutputItems({ items }: { items: TOutputItem[] }) {
  const t = useTranslations("output");
  const [all, setAll] = useState(false);
  if (items.length === 0) return <p className="empty">{t("none")}</p>;
  const shown = all ? items : items.slice(0, FIRST);
  return (
    <>
      <ol className="items">
        {shown.map((item, i) => (
          // Output items have no stable id of their own; their order is fixed once stored.
          // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
          <li key={i}>
            <Item item={item} />
          </li>
        ))}
      </ol>
      {items.length > FIRST ? (
        <p>
          <button type="button" className="btn btn-quiet" onClick={() => setAll(!all)}>
            {all ? t("showFirst", { n: FIRST }) : t("showAll", { n: items.length })}
          </button>
        </p>
      ) : null}
    </>
  );
}
