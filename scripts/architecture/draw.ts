/**
 * Draws the folder graph with dependency-cruiser (the same rules file as `npm run lint:layers`,
 * collapsed to folders, as Mermaid) into docs/architecture.md, between the two `folder-graph`
 * markers: `npm run architecture:draw`. scripts/architecture/architecture.test.ts fails when the
 * committed picture differs from what this draws from the code.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DOC = join(ROOT, "docs", "architecture.md");
const START = "<!-- folder-graph: drawn by `npm run architecture:draw` from the code; do not edit by hand -->";
const END = "<!-- /folder-graph -->";

/** The folders of the graph, each drawn as one box (server's folders and top-level files one each). */
const ROOTS = ["server", "plugin-sdk", "db", "components", "app", "i18n", "clients", "messages"];
const COLLAPSE = "^(server/[^/]+|plugin-sdk|db|components|app|i18n|clients/[^/]+|messages)";

/** The folder graph of the code as dependency-cruiser draws it (Mermaid). */
export function drawFolderGraph(): string {
  const mermaid = execFileSync(
    join(ROOT, "node_modules", ".bin", "depcruise"),
    [...ROOTS, "--config", ".dependency-cruiser.cjs", "--output-type", "mermaid", "--collapse", COLLAPSE, "--include-only", `^(${ROOTS.join("|")})/`],
    { cwd: ROOT, encoding: "utf8" },
  );
  return mermaid.trim();
}

/** The docs page with `mermaid` as its folder graph. */
export function withFolderGraph(doc: string, mermaid: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC} lacks the folder-graph markers (${START} … ${END}).`);
  return `${doc.slice(0, start)}${START}\n\`\`\`mermaid\n${mermaid}\n\`\`\`\n${doc.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, "utf8");
  const next = withFolderGraph(doc, drawFolderGraph());
  if (next === doc) console.log("docs/architecture.md: the folder graph is up to date.");
  else {
    writeFileSync(DOC, next);
    console.log("docs/architecture.md: the folder graph was redrawn.");
  }
}
