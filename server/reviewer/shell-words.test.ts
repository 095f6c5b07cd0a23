import { describe, expect, it } from "vitest";
import { parseShell, SUBSTITUTION } from "./shell-words";

describe("parseShell", () => {
  it("resolves quotes and backslashes the way the shell does", () => {
    expect(parseShell(`r''m -rf "/tmp/a b" \\/etc 'it''s'`).segments).toEqual([{ words: ["rm", "-rf", "/tmp/a b", "/etc", "its"], redirects: [] }]);
  });

  it("splits simple commands on ; && || | & newlines and parentheses", () => {
    const words = parseShell("a 1; b && c || d | e & f\n(g)").segments.map((s) => s.words[0]);
    expect(words).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  it("reads redirections: targets of > >> &> 2>, not descriptor copies, heredoc delimiters or quoted arrows", () => {
    const { segments } = parseShell("echo 'a > /b' >out 2>>err &>all 2>&1 >&2 <in <<EOF");
    expect(segments[0]).toEqual({
      words: ["echo", "a > /b"],
      redirects: [
        { op: ">", target: "out" },
        { op: ">", target: "err" },
        { op: ">", target: "all" },
        { op: "<", target: "in" },
      ],
    });
  });

  it("replaces substitutions by a placeholder word and returns their text", () => {
    const parsed = parseShell('$(echo rm) -rf "`pwd`/x" <(cat a) $((1+2))');
    expect(parsed.segments[0]?.words).toEqual([SUBSTITUTION, "-rf", `${SUBSTITUTION}/x`, SUBSTITUTION, SUBSTITUTION]);
    expect(parsed.substitutions).toEqual(["echo rm", "pwd", "cat a", "(1+2)"]);
  });

  it("drops comments and brace-group words", () => {
    expect(parseShell("{ ls; } # rm -rf /").segments).toEqual([{ words: ["ls"], redirects: [] }]);
  });
});
