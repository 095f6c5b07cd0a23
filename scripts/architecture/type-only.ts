/**
 * The type-only half of the folder layers (`npm run lint:layers` runs it after dependency-cruiser,
 * whose swc parser does not tell which imports are `import type`):
 * - server/ports holds interfaces only: every import and re-export is `import type` /
 *   `export type`, and every statement declares a type (no value, so the folder has no code and no
 *   runtime dependency);
 * - the console (components/, app/) imports the tRPC router (server/api/trpc/root.ts) as a type only.
 * Prints one line per violation and exits 1 when there is any.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import swc, { type ModuleItem } from "@swc/core";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TYPE_DECLARATIONS = new Set(["TsTypeAliasDeclaration", "TsInterfaceDeclaration"]);
const TRPC_ROOT = /(^|\/)server\/api\/trpc\/root(\.ts)?$/;

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && pattern.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

export const parseModule = (source: string, tsx = false): ModuleItem[] => swc.parseSync(source, { syntax: "typescript", tsx }).body;
const parse = (file: string): ModuleItem[] => parseModule(readFileSync(join(ROOT, file), "utf8"), file.endsWith(".tsx"));

/** What is wrong with one top-level statement of a ports file, or null. */
export function portsProblem(statement: ModuleItem): string | null {
  switch (statement.type) {
    case "ImportDeclaration":
      return statement.typeOnly ? null : `imports "${statement.source.value}" without \`import type\``;
    case "ExportNamedDeclaration":
      return statement.typeOnly ? null : `re-exports ${statement.source ? `"${statement.source.value}"` : "a value"} without \`export type\``;
    case "ExportAllDeclaration":
      return `re-exports everything of "${statement.source.value}" (\`export *\` carries values)`;
    case "ExportDeclaration":
      return TYPE_DECLARATIONS.has(statement.declaration.type) ? null : `exports a value (${statement.declaration.type})`;
    default:
      return TYPE_DECLARATIONS.has(statement.type) ? null : `declares a value (${statement.type})`;
  }
}

export function typeOnlyViolations(): string[] {
  const problems: string[] = [];
  for (const file of filesUnder("server/ports", /\.ts$/)) {
    for (const statement of parse(file)) {
      const problem = portsProblem(statement);
      if (problem) problems.push(`${file}: ${problem}; server/ports holds interfaces only`);
    }
  }
  for (const file of [...filesUnder("components", /\.tsx?$/), ...filesUnder("app", /\.tsx?$/)]) {
    for (const statement of parse(file)) {
      const source = statement.type === "ImportDeclaration" ? statement.source.value : undefined;
      if (statement.type === "ImportDeclaration" && TRPC_ROOT.test(source ?? "") && !statement.typeOnly) {
        problems.push(`${file}: imports "${source}" without \`import type\`; the console knows the tRPC router as a type only`);
      }
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = typeOnlyViolations();
  for (const problem of problems) console.error(`  error type-only: ${problem}`);
  if (problems.length > 0) {
    console.error(`\nx ${problems.length} type-only violation${problems.length === 1 ? "" : "s"}.`);
    process.exit(1);
  }
  console.log("✔ type-only imports: server/ports holds interfaces only; the console imports the tRPC router as a type.");
}
