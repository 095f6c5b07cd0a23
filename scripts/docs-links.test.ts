import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

/**
 * The README and docs/ link to each other by relative paths and GitHub heading anchors. This
 * checks, without a network or a renderer: every relative link names a file that exists, every
 * `#anchor` into a markdown file names one of its headings (GitHub's slugs), and every page under
 * docs/ can be reached from README.md by following links.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

type TProblem = { file: string; line: number; message: string };
type TLink = { line: number; target: string };

/** Blanks fenced code blocks and inline code spans (keeping every newline, so offsets still give lines). */
function blankCode(markdown: string): string {
  const lines = markdown.split("\n");
  let fence: string | null = null;
  const kept = lines.map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && open?.[1]) {
      fence = open[1];
      return "";
    }
    if (fence !== null) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close?.[1] && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      return "";
    }
    return line;
  });
  // Inline code never spans a blank line: pair backticks within each paragraph only.
  return kept
    .join("\n")
    .split(/(\n[ \t]*\n)/)
    .map((part) => part.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, "x")))
    .join("");
}

/** GitHub's heading anchor: lower case, punctuation dropped (hyphens and underscores kept), each space a hyphen. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link or image: its text
    .replace(/<[^>]+>/g, "") // inline HTML tags
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a markdown file offers: one per heading outside code blocks (repeats get -1, -2, …), plus explicit `<a id|name>`. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split("\n");
  let fence: string | null = null;
  for (const line of lines) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && open?.[1]) {
      fence = open[1];
      continue;
    }
    if (fence !== null) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close?.[1] && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading?.[1] !== undefined) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) if (a[1]) found.add(a[1]);
  }
  return found;
}

/** Every link target of a markdown text (inline links, images, reference definitions), outside code. */
function links(markdown: string): TLink[] {
  const text = blankCode(markdown);
  const lineAt = (offset: number) => text.slice(0, offset).split("\n").length;
  const out: TLink[] = [];
  const inline = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
  for (const m of text.matchAll(inline)) {
    const target = (m[1] ?? "").replace(/^<|>$/g, "");
    out.push({ line: lineAt(m.index ?? 0), target });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)) {
    out.push({ line: lineAt(m.index ?? 0), target: (m[1] ?? "").replace(/^<|>$/g, "") });
  }
  return out;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

/**
 * Checks the given markdown files (repository-relative posix paths → text). `exists` answers
 * whether a repository-relative path is a file or folder; `read` gives the text of a markdown
 * file that is linked to but not among `files` (or undefined).
 */
function checkDocs(
  files: Map<string, string>,
  exists: (path: string) => boolean,
  read: (path: string) => string | undefined,
  start = "README.md",
): { problems: TProblem[]; reachable: Set<string> } {
  const problems: TProblem[] = [];
  const anchorCache = new Map<string, Set<string> | null>();
  const anchorsOf = (path: string) => {
    if (!anchorCache.has(path)) {
      const text = files.get(path) ?? read(path);
      anchorCache.set(path, text === undefined ? null : anchors(text));
    }
    return anchorCache.get(path) ?? null;
  };
  const edges = new Map<string, string[]>();
  for (const [file, text] of files) {
    const out: string[] = [];
    for (const { line, target } of links(text)) {
      if (target === "" || isExternal(target)) continue;
      const hash = target.indexOf("#");
      const rawPath = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      let path: string;
      try {
        const decoded = decodeURIComponent(rawPath);
        path = decoded === "" ? file : decoded.startsWith("/") ? posix.normalize(decoded.slice(1)) : posix.normalize(posix.join(posix.dirname(file), decoded));
      } catch {
        problems.push({ file, line, message: `malformed link ${target}` });
        continue;
      }
      if (path.startsWith("../") || path === "..") {
        problems.push({ file, line, message: `link ${target} leaves the repository` });
        continue;
      }
      path = path.replace(/\/$/, "");
      if (!exists(path)) {
        problems.push({ file, line, message: `dead link ${target}: ${path} does not exist` });
        continue;
      }
      if (path.endsWith(".md")) out.push(path);
      if (anchor !== null && path.endsWith(".md")) {
        const known = anchorsOf(path);
        if (known !== null && !known.has(anchor)) problems.push({ file, line, message: `dead anchor ${target}: ${path} has no heading #${anchor}` });
      }
    }
    edges.set(file, out);
  }
  const reachable = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    for (const to of edges.get(next) ?? []) {
      if (!reachable.has(to)) {
        reachable.add(to);
        queue.push(to);
      }
    }
  }
  return { problems, reachable };
}

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

describe("README.md and docs/", () => {
  const paths = ["README.md", ...markdownUnder("docs")];
  const files = new Map(paths.map((p) => [p, readFileSync(join(ROOT, p), "utf8")]));
  const { problems, reachable } = checkDocs(
    files,
    (p) => existsSync(join(ROOT, p)),
    (p) => (existsSync(join(ROOT, p)) ? readFileSync(join(ROOT, p), "utf8") : undefined),
  );

  test("no relative link points to a missing file or a missing heading", () => {
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([]);
  });

  test("every page under docs/ is reachable from README.md by following links", () => {
    expect(paths.filter((p) => p.startsWith("docs/") && !reachable.has(p))).toEqual([]);
  });
});

describe("the checker itself", () => {
  const exists = (files: Map<string, string>, others: string[] = []) => (p: string) => files.has(p) || others.includes(p) || p === "docs";

  test("GitHub slugs: case, punctuation, code and repeats", () => {
    expect(slug("Display names: shown with the email, one per person")).toBe("display-names-shown-with-the-email-one-per-person");
    expect(slug("The host's side: harnesses in this repository")).toBe("the-hosts-side-harnesses-in-this-repository");
    expect(slug("Checking a deployment: `npm run load`")).toBe("checking-a-deployment-npm-run-load");
    expect(slug("`COUNTERSIGN_MCP_SERVERS`")).toBe("countersign_mcp_servers");
    expect(slug("Side questions (plugin API 1.2)")).toBe("side-questions-plugin-api-12");
    expect([...anchors("# A\n## B\n```sh\n# not a heading\n```\n## B\n")]).toEqual(["a", "b", "b-1"]);
  });

  test("a dead file, a dead anchor and an unreachable page are each found; code is not read as links", () => {
    const files = new Map([
      ["README.md", "# Top\n[ok](docs/a.md#section) [gone](docs/missing.md) [bad](docs/a.md#nope)\n`[not](a-link.md)`\n```\n[also](not-a-link.md)\n```\n[self](#top)"],
      ["docs/a.md", "# A\n## Section\n[back](../README.md#top) [up](../README.md#nowhere)"],
      ["docs/orphan.md", "# Orphan\n"],
    ]);
    const { problems, reachable } = checkDocs(files, exists(files), () => undefined);
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([
      "README.md:2: dead link docs/missing.md: docs/missing.md does not exist",
      "README.md:2: dead anchor docs/a.md#nope: docs/a.md has no heading #nope",
      "docs/a.md:3: dead anchor ../README.md#nowhere: README.md has no heading #nowhere",
    ]);
    expect([...reachable].sort()).toEqual(["README.md", "docs/a.md"]);
  });
});
