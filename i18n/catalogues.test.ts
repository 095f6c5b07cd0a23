import { createTranslator } from "next-intl";
import { describe, expect, test } from "vitest";
import { ConnectionLostError, errorSentence } from "../components/error-sentence";
import { CATALOGUES } from "./catalogues";
import { LOCALES, negotiateLocale } from "./locales";

/** Every leaf of a catalogue as `a.b.c` → text. */
function leaves(node: unknown, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      for (const [k, v] of leaves(value, prefix ? `${prefix}.${key}` : key)) out.set(k, v);
    }
  } else out.set(prefix, node);
  return out;
}

describe("message catalogues", () => {
  const english = leaves(CATALOGUES.en);

  test.each(LOCALES.filter((l) => l !== "en"))("%s has exactly the English keys", (locale) => {
    const other = leaves(CATALOGUES[locale]);
    expect([...other.keys()].sort()).toEqual([...english.keys()].sort());
  });

  test.each(LOCALES)("%s has no empty or non-text messages", (locale) => {
    for (const [key, value] of leaves(CATALOGUES[locale])) {
      expect(typeof value, key).toBe("string");
      expect((value as string).trim(), key).not.toBe("");
    }
  });

  test.each(LOCALES)("every %s message uses only placeholders English has, and formats", (locale) => {
    const placeholders = (text: string) => new Set([...text.matchAll(/\{(\w+)[,}]/g)].map((m) => m[1]));
    for (const [key, value] of leaves(CATALOGUES[locale])) {
      const known = placeholders(english.get(key) as string);
      for (const name of placeholders(value as string)) expect(known.has(name), `${key}: {${name}}`).toBe(true);
    }
    const t = createTranslator({ locale, messages: CATALOGUES[locale], onError: (error) => expect.fail(error.message) });
    expect(t("form.needFixing", { n: 2 })).not.toBe("");
    expect(t("time.expiresIn", { duration: "1m" })).toContain("1m");
  });

  test("the Chinese catalogue is Chinese", () => {
    const t = createTranslator({ locale: "zh-CN", messages: CATALOGUES["zh-CN"] });
    expect(t("answer.titleOne")).toBe("有一个问题需要你回答");
    expect(t("shell.nav.approvals")).toBe("审批");
  });
});

describe("composed decision sentences", () => {
  const en = createTranslator({ locale: "en", messages: CATALOGUES.en, namespace: "decisionOutcome", onError: (error) => expect.fail(error.message) });
  const zh = createTranslator({ locale: "zh-CN", messages: CATALOGUES["zh-CN"], namespace: "decisionOutcome", onError: (error) => expect.fail(error.message) });

  test("read in English exactly as the console wrote them before they were messages", () => {
    expect(en("approved", { what: "tool:exec (ls)", edited: "no", grant: "days", days: 3 })).toBe("You approved tool:exec (ls); the agent goes on. It now runs without asking for 3 days.");
    expect(en("approved", { what: "tool:exec (ls)", edited: "yes", grant: "none", days: 0 })).toBe("You approved the edited call of tool:exec (ls); the agent goes on.");
    const settled = { verb: "Denied", by: "yes", who: "Demo Operator", me: "yes", detail: "none", reply: "", via: en("viaPhrase.http"), cancelled: "no" };
    expect(en("settledBy", settled)).toBe("Denied by Demo Operator (you, elsewhere) via the HTTP API");
    expect(en("bulkNote", { decision: "approve", n: 2, of: 3, failed: 1 })).toBe("You approved 2 of 3 selected requests. 1 could not be decided; each says why.");
    expect(en("bulkNote", { decision: "deny", n: 3, of: 3, failed: 0 })).toBe("You denied 3 of 3 selected requests.");
  });

  test("read in Chinese with every part in place", () => {
    expect(zh("approved", { what: "tool:exec (ls)", edited: "no", grant: "session", days: 0 })).toBe("你批准了 tool:exec (ls)；智能体继续运行。在本会话剩余时间内，它将无需询问直接运行。");
    const settled = { verb: zh("verb.approved"), by: "yes", who: "Ada", me: "no", detail: "reply", reply: "用预发布环境", via: zh("viaPhrase.console"), cancelled: "no" };
    expect(zh("settledBy", settled)).toBe("已批准，决定人：Ada，并回复（“用预发布环境”），渠道：控制台");
  });
});

describe("errorSentence in another language", () => {
  test("a dropped connection is named in Chinese, with the subject of the action", () => {
    const t = createTranslator({ locale: "zh-CN", messages: CATALOGUES["zh-CN"], namespace: "errors" });
    expect(errorSentence(new ConnectionLostError(), "answer", t)).toBe(
      "在 Countersign 回应之前连接已断开，因此无法确定你的回答是否已送达。请检查网络连接，然后重新加载页面查看当前状态，再重试。",
    );
  });
});

describe("negotiateLocale", () => {
  test.each([
    ["zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"],
    ["zh", "zh-CN"],
    ["zh-Hans-CN", "zh-CN"],
    ["en-US,en;q=0.9", "en"],
    ["fr-FR,zh-CN;q=0.5", "zh-CN"],
    ["en;q=0.5,zh-CN;q=0.8", "zh-CN"],
    ["zh-TW", "en"],
    ["de", "en"],
    ["", "en"],
    [null, "en"],
  ])("%s → %s", (header, locale) => {
    expect(negotiateLocale(header)).toBe(locale);
  });

  test("a list such as navigator.languages keeps its order", () => {
    expect(negotiateLocale(["zh-CN", "en-US"])).toBe("zh-CN");
    expect(negotiateLocale(["en-US", "zh-CN"])).toBe("en");
  });
});
