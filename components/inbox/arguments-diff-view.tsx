import { useTranslations } from "next-intl";
import type { TArgumentChange } from "./argument-diff";

const shown = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));

/** Requested vs edited arguments, one line per change, shown before anything edited is approved. */
export function ArgumentsDiffView({ changes }: { changes: TArgumentChange[] }) {
  const t = useTranslations("inbox.diff");
  if (changes.length === 0) return null;
  return (
    <div className="args-diff" data-testid="arguments-diff">
      <p className="label">
        {t("changes", { n: changes.length })}
      </p>
      <table className="table table-compact">
        <thead>
          <tr>
            <th scope="col">{t("argument")}</th>
            <th scope="col">{t("requested")}</th>
            <th scope="col">{t("instead")}</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.path} data-testid="diff-row" data-kind={c.kind}>
              <th scope="row">
                <code>{c.path}</code>
              </th>
              <td className="diff-before">{c.kind === "added" ? <span className="muted">{t("notSet")}</span> : <del className="mono">{shown(c.before)}</del>}</td>
              <td className="diff-after">{c.kind === "removed" ? <span className="muted">{t("removed")}</span> : <ins className="mono">{shown(c.after)}</ins>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
