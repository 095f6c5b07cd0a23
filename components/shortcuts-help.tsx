import { useTranslations } from "next-intl";
import { Kbd } from "./filters";

/** The inbox's keyboard shortcuts (toggled with `?`). */
export function ShortcutsHelp() {
  const t = useTranslations("shortcuts");
  return (
    <div className="card shortcuts-help" data-testid="shortcuts-help">
      <h2>{t("title")}</h2>
      <dl className="shortcut-list">
        <dt>
          <Kbd>j</Kbd> <Kbd>k</Kbd>
        </dt>
        <dd>{t("move")}</dd>
        <dt>
          <Kbd>a</Kbd>
        </dt>
        <dd>{t("approve")}</dd>
        <dt>
          <Kbd>d</Kbd>
        </dt>
        <dd>{t("deny")}</dd>
        <dt>
          <Kbd>e</Kbd>
        </dt>
        <dd>{t("edit")}</dd>
        <dt>
          <Kbd>r</Kbd>
        </dt>
        <dd>{t("reply")}</dd>
        <dt>
          <Kbd>g</Kbd>
        </dt>
        <dd>{t("grant")}</dd>
        <dt>
          <Kbd>x</Kbd>
        </dt>
        <dd>{t("select")}</dd>
        <dt>
          <Kbd>o</Kbd>
        </dt>
        <dd>{t("open")}</dd>
        <dt>
          <Kbd>Esc</Kbd>
        </dt>
        <dd>{t("escape")}</dd>
      </dl>
    </div>
  );
}
