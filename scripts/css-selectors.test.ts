import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "@swc/core";
import { describe, expect, test } from "vitest";

/**
 * Every class, id and data attribute a stylesheet selects is one the console's source sets: a
 * selector no component uses is dead weight that hides which rules still matter. The stylesheets
 * are every .css file under app/ and components/; the source is every .ts and .tsx file there
 * (tests excluded), parsed with SWC. A class counts as used when a string literal or a template
 * literal's text holds it as a whole space-separated word ("badge risk-low", `card ${x}`), so a
 * class built from pieces (`risk-${risk}`) is not found: spell each one out (a map from the value
 * to its class) rather than allowing it below. A CSS module's class counts when the source reads
 * it as a property (`styles.row`). Every plain stylesheet is imported by a file under app/ (the
 * root layout imports them in cascade order).
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIRS = ["app", "components"];

/**
 * Classes set at run time that no literal in the source spells out, each with the reason. Keep
 * this short: a map with every class written whole is better than an entry here.
 */
const SET_AT_RUN_TIME: Record<string, string> = {};

type TSelector = { file: string; line: number; selector: string };
type TUsage = { words: Set<string>; properties: Set<string>; attributes: Set<string>; imports: Set<string> };

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, keep));
    else if (keep(entry.name)) found.push(path.split(sep).join("/"));
  }
  return found.sort();
}

/** The selectors of a stylesheet's style rules (not at-rule preludes, not keyframe offsets), with their lines. */
function selectorsOf(file: string, css: string): TSelector[] {
  // Comments blanked, newlines kept, so offsets still give lines.
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "));
  const found: TSelector[] = [];
  const open: boolean[] = []; // per open block: does it hold keyframe offsets?
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "{") {
      const prelude = text.slice(start, i);
      const selector = prelude.trim();
      const inKeyframes = open.at(-1) === true;
      if (selector && !selector.startsWith("@") && !inKeyframes) {
        const line = text.slice(0, start + prelude.search(/\S/)).split("\n").length;
        found.push({ file, line, selector: selector.replace(/\s+/g, " ") });
      }
      open.push(/^@(-\w+-)?keyframes\b/.test(selector));
      start = i + 1;
    } else if (ch === "}") {
      open.pop();
      start = i + 1;
    } else if (ch === ";") {
      start = i + 1;
    }
  }
  return found;
}

/** What a selector names: its classes, ids and data-* attributes (strings and attribute values set aside). */
function namesIn(selector: string): { classes: string[]; ids: string[]; attributes: string[] } {
  const attributes = [...selector.matchAll(/\[\s*(data-[\w-]+)/g)].map((m) => m[1] as string);
  const bare = selector.replace(/"[^"]*"|'[^']*'/g, '""').replace(/\[[^\]]*\]/g, "[]");
  const classes = [...bare.matchAll(/\.(-?[_a-zA-Z][\w-]*)/g)].map((m) => m[1] as string);
  const ids = [...bare.matchAll(/#(-?[_a-zA-Z][\w-]*)/g)].map((m) => m[1] as string);
  return { classes, ids, attributes };
}

/** Where a type is written (`TOutputs["audit"]["timeline"]`): its strings are no classes. */
const TYPE_ONLY = new Set(["span", "typeAnnotation", "typeParameters", "typeParams", "typeArguments", "returnType", "superTypeParams"]);

/** A call's callee name: `t` for `t("x")`, `t` for `t.rich("x")`, `useTranslations` for `useTranslations("x")`. */
function calleeName(callee: unknown): string | null {
  const c = callee as { type?: string; value?: unknown; object?: unknown };
  if (c?.type === "Identifier" && typeof c.value === "string") return c.value;
  if (c?.type === "MemberExpression") return calleeName(c.object);
  return null;
}

type TAstNode = Record<string, unknown> & { type?: string };

/**
 * Walks an swc AST depth first. `visit` sees every node and returns true when it has walked (or
 * meant to skip) that node's children itself, through the `walk` it is handed; otherwise every
 * property but those in `skip` is walked.
 */
function walkAst(root: unknown, skip: ReadonlySet<string>, visit: (node: TAstNode, walk: (child: unknown) => void) => boolean): void {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const child of node) walk(child);
      return;
    }
    if (!node || typeof node !== "object") return;
    const n = node as TAstNode;
    if (visit(n, walk)) return;
    for (const key in n) if (!skip.has(key)) walk(n[key]);
  };
  walk(root);
}

/** The names a file binds to a translator (`const t = useTranslations("x")`, `const t = await getTranslations("x")`). */
function translatorsIn(ast: unknown): Set<string> {
  const names = new Set<string>(["useTranslations", "getTranslations"]);
  walkAst(ast, new Set(["span"]), (n) => {
    if (n.type === "VariableDeclarator") {
      let init = n.init as { type?: string; argument?: unknown; callee?: unknown } | undefined;
      if (init?.type === "AwaitExpression") init = init.argument as typeof init;
      const id = n.id as { type?: string; value?: unknown };
      const from = init?.type === "CallExpression" ? calleeName(init.callee) : null;
      if (from && /^(use|get)Translations$/.test(from) && id.type === "Identifier" && typeof id.value === "string") names.add(id.value);
    }
    return false;
  });
  return names;
}

/**
 * Every whole word of the source's string and template literals, the properties it reads, the JSX
 * attributes it sets, the files it imports. Strings that never become a class are left out, so
 * they cannot hide a dead one: message keys (`t("expired")`, `useTranslations("args")`), module
 * names, and plain values of an HTML element's other attributes (`role="status"`, `type="button"`), types (`TOutputs["audit"]["timeline"]`).
 */
function usageOf(files: { file: string; source: string }[]): TUsage {
  const usage: TUsage = { words: new Set(), properties: new Set(), attributes: new Set(), imports: new Set() };
  const addWords = (text: string) => {
    for (const word of text.split(/\s+/)) if (word) usage.words.add(word);
  };
  for (const { file, source } of files) {
    const ast = parseSync(source, { syntax: "typescript", tsx: file.endsWith(".tsx") });
    const translators = translatorsIn(ast);
    walkAst(ast, TYPE_ONLY, (n, walk) => {
      if (n.type === "TsTypeAliasDeclaration" || n.type === "TsInterfaceDeclaration") return true;
      if (n.type === "StringLiteral" && typeof n.value === "string") addWords(n.value);
      else if (n.type === "TemplateElement") addWords(String(n.cooked ?? n.raw ?? ""));
      else if (n.type === "MemberExpression") {
        const property = n.property as { type?: string; value?: unknown };
        if (property.type === "Identifier" && typeof property.value === "string") usage.properties.add(property.value);
      } else if (n.type === "ImportDeclaration" || n.type === "ExportAllDeclaration" || n.type === "ExportNamedDeclaration") {
        const from = (n.source as { value?: unknown } | null)?.value;
        if (typeof from === "string" && from.startsWith(".")) usage.imports.add(join(dirname(file), from).split(sep).join("/"));
        else if (typeof from === "string" && from.startsWith("@/")) usage.imports.add(from.slice(2));
        if (n.type !== "ImportDeclaration") for (const key in n) if (key !== "span" && key !== "source") walk(n[key]);
        return true;
      } else if (n.type === "CallExpression" && translators.has(calleeName(n.callee) ?? "")) {
        // The message key (a plain string) is no class; the values passed with it may be.
        const [key, ...rest] = n.arguments as { expression?: { type?: string } }[];
        if (key?.expression?.type !== "StringLiteral") walk(key);
        walk(rest);
        return true;
      } else if (n.type === "JSXOpeningElement") {
        const name = n.name as { type?: string; value?: unknown };
        const html = name.type === "Identifier" && typeof name.value === "string" && /^[a-z]/.test(name.value);
        for (const attribute of n.attributes as { type?: string; name?: { type?: string; value?: unknown }; value?: { type?: string } | null }[]) {
          const attrName = attribute.type === "JSXAttribute" && attribute.name?.type === "Identifier" ? String(attribute.name.value) : null;
          if (attrName) usage.attributes.add(attrName);
          if (html && attrName && !/class/i.test(attrName) && attribute.value?.type === "StringLiteral") continue;
          walk(attribute.value ?? null);
          if (attribute.type !== "JSXAttribute") walk(attribute);
        }
        return true;
      }
      return false;
    });
  }
  return usage;
}

/** The selectors' names the source never sets: one line each, `file:line  .class  in selector`. */
function unusedNames(selectors: TSelector[], usage: TUsage, setAtRunTime: Record<string, string> = {}): string[] {
  const problems: string[] = [];
  for (const { file, line, selector } of selectors) {
    const cssModule = file.endsWith(".module.css");
    const { classes, ids, attributes } = namesIn(selector);
    const missing = [
      ...classes.filter((c) => !(c in setAtRunTime) && !(cssModule ? usage.properties.has(c) || usage.words.has(c) : usage.words.has(c))).map((c) => `.${c}`),
      ...ids.filter((id) => !usage.words.has(id)).map((id) => `#${id}`),
      ...attributes.filter((a) => !usage.attributes.has(a) && !usage.words.has(a)).map((a) => `[${a}]`),
    ];
    for (const name of new Set(missing)) problems.push(`${file}:${line}  ${name}  in ${selector}`);
  }
  return problems;
}

function read(file: string): string {
  return readFileSync(join(ROOT, file), "utf8");
}

describe("stylesheets select only what the source sets", () => {
  const cssFiles = DIRS.flatMap((dir) => filesUnder(dir, (name) => name.endsWith(".css")));
  const sourceFiles = DIRS.flatMap((dir) => filesUnder(dir, (name) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith(".d.ts")));
  const usage = usageOf(sourceFiles.map((file) => ({ file, source: read(file) })));
  const selectors = cssFiles.flatMap((file) => selectorsOf(file, read(file)));

  test("finds the stylesheets, their selectors and the source", () => {
    expect(cssFiles).toContain("app/globals.css");
    expect(selectors.length).toBeGreaterThan(300);
    expect(usage.words.has("btn-primary")).toBe(true);
  });

  test("every class, id and data attribute a selector names is set by a component or page", () => {
    expect(unusedNames(selectors, usage, SET_AT_RUN_TIME)).toEqual([]);
  });

  test("every class allowed as set at run time is selected, and no literal spells it out", () => {
    const selected = new Set(selectors.flatMap((s) => namesIn(s.selector).classes));
    for (const name of Object.keys(SET_AT_RUN_TIME)) {
      expect(selected.has(name), `${name} is selected by no stylesheet: drop it from SET_AT_RUN_TIME`).toBe(true);
      expect(usage.words.has(name), `${name} is spelled out in the source: drop it from SET_AT_RUN_TIME`).toBe(false);
    }
  });

  test("every plain stylesheet is imported by a file under app/", () => {
    const imported = cssFiles.filter((file) => !file.endsWith(".module.css") && !usage.imports.has(file));
    expect(imported, "stylesheets nothing imports (import them from app/layout.tsx, in cascade order)").toEqual([]);
  });

  test("a planted selector no component uses is reported, with its file and line", () => {
    const planted = selectorsOf("app/planted.css", ".btn { color: red; }\n\n/* .nowhere-a { } */\n@media (max-width: 1px) {\n  .card .planted-nowhere:hover { color: red; }\n}\n@keyframes k { from { opacity: 0; } }\n[data-planted-attr] { color: red; }\n");
    expect(unusedNames(planted, usage)).toEqual([
      "app/planted.css:5  .planted-nowhere  in .card .planted-nowhere:hover",
      "app/planted.css:8  [data-planted-attr]  in [data-planted-attr]",
    ]);
  });

  test("a class built from pieces is not found; the whole word in a literal is", () => {
    const built = usageOf([{ file: "x.tsx", source: `export const A = ({ r }: { r: string }) => <span className={\`badge risk-\${r}\`} />;` }]);
    expect(built.words.has("risk-low")).toBe(false);
    const spelled = usageOf([{ file: "x.tsx", source: `const RISK = { low: "risk-low" };\nexport const A = ({ r }: { r: "low" }) => <span className={\`badge \${RISK[r]}\`} />;` }]);
    expect(spelled.words.has("risk-low")).toBe(true);
    expect(spelled.words.has("badge")).toBe(true);
  });

  test("a CSS module's class counts when the source reads it as a property", () => {
    const modules = usageOf([{ file: "x.tsx", source: 'import styles from "./x.module.css";\nexport const A = () => <p className={styles.row} />;' }]);
    const rules = selectorsOf("components/x.module.css", ".row { margin: 0; }\n.gone { margin: 0; }\n");
    expect(unusedNames(rules, modules)).toEqual(["components/x.module.css:2  .gone  in .gone"]);
  });
});
