/**
 * A small shell lexer for the rules that need exact words: which paths a command writes, reads or
 * uploads. Quotes and backslashes are resolved the way the shell resolves them (so `r''m`, `\rm`
 * and `"/etc"` read as `rm` and `/etc`); every `$(…)`, backtick and `<(…)` becomes the placeholder
 * word `$(…)` and its text is returned to be read on its own. It is not a full shell parser: it
 * errs on the side of seeing more commands (heredoc bodies read as commands), never fewer.
 */

/** A redirection: `>`/`>>`/`>|`/`&>` write `target`, `<` reads it (`<<` heredocs and `<<<` strings have none). */
export type TRedirect = { op: ">" | "<"; target: string };
/** One simple command: its words after quote removal, and its redirections. */
export type TShellSegment = { words: string[]; redirects: TRedirect[] };
/** A line: its simple commands in order, and the text of every substitution inside it. */
export type TShellLine = { segments: TShellSegment[]; substitutions: string[] };

/** The word a substitution leaves behind: its value is unknown until the shell runs it. */
export const SUBSTITUTION = "$(…)";

/** The index just past the `)` closing the `(` at `open`, honouring quotes and nesting. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"') i++;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "\\") i++;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Splits a command line into simple commands of exact words (see the module comment). */
export function parseShell(line: string): TShellLine {
  const segments: TShellSegment[] = [];
  const substitutions: string[] = [];
  let words: string[] = [];
  let redirects: TRedirect[] = [];
  let word: string | null = null;
  let pending: { op: ">" | "<" | null } | null = null;

  const endWord = () => {
    if (word === null) return;
    if (pending) {
      if (pending.op) redirects.push({ op: pending.op, target: word });
      pending = null;
    } else if (word !== "{" && word !== "}") words.push(word);
    word = null;
  };
  const endSegment = () => {
    endWord();
    // A redirection without a target is a syntax error; the next command must still be read as one.
    pending = null;
    if (words.length > 0 || redirects.length > 0) segments.push({ words, redirects });
    words = [];
    redirects = [];
  };
  const substitute = (inner: string) => {
    substitutions.push(inner);
    word = (word ?? "") + SUBSTITUTION;
  };

  for (let i = 0; i < line.length; i++) {
    const ch = line[i] ?? "";
    const next = line[i + 1] ?? "";
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (ch === '"') {
      word ??= "";
      for (i++; i < line.length && line[i] !== '"'; i++) {
        const c = line[i] ?? "";
        if (c === "\\" && /["\\$`\n]/.test(line[i + 1] ?? "")) word += line[++i] === "\n" ? "" : line[i];
        else if (c === "$" && line[i + 1] === "(") {
          const end = closingParen(line, i + 1);
          substitute(line.slice(i + 2, end - 1));
          i = end - 1;
        } else if (c === "`") {
          const end = line.indexOf("`", i + 1);
          substitute(line.slice(i + 1, end < 0 ? line.length : end));
          i = end < 0 ? line.length : end;
        } else word += c;
      }
    } else if (ch === "\\") {
      if (next !== "\n") word = (word ?? "") + next;
      i++;
    } else if ((ch === "$" || ch === "<" || ch === ">") && next === "(" && (ch === "$" || word === null)) {
      const end = closingParen(line, i + 1);
      substitute(line.slice(i + 2, end - 1));
      i = end - 1;
    } else if (ch === "`") {
      const end = line.indexOf("`", i + 1);
      substitute(line.slice(i + 1, end < 0 ? line.length : end));
      i = end < 0 ? line.length : end;
    } else if (ch === ">" || ch === "<" || (ch === "&" && next === ">")) {
      // A word of digits right before it is a file descriptor (`2>`), not an argument.
      if (word !== null && /^\d+$/.test(word)) word = null;
      endWord();
      let j = ch === "&" ? i + 1 : i;
      const op = line[j] === ">" ? ">" : "<";
      j++;
      if (op === "<" && line[j] === "<") {
        // Heredoc delimiter or here-string: data, not a file.
        pending = { op: null };
        while (line[j] === "<" || line[j] === "-") j++;
      } else {
        while (line[j] === ">" || line[j] === "|") j++;
        if (line[j] === "&") {
          // `>&2`, `<&0`, `>&-`: duplicates a descriptor.
          j++;
          while (/[\d-]/.test(line[j] ?? "")) j++;
          i = j - 1;
          continue;
        }
        pending = { op };
      }
      i = j - 1;
    } else if (ch === "#" && word === null) {
      while (i + 1 < line.length && line[i + 1] !== "\n") i++;
    } else if (/[;&|\n()]/.test(ch)) {
      endSegment();
    } else if (/\s/.test(ch)) {
      endWord();
    } else {
      word = (word ?? "") + ch;
    }
  }
  endSegment();
  return { segments, substitutions };
}
