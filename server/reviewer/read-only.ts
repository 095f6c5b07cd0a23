/**
 * Recognises commands that clearly only read the workspace. It is strict on purpose: anything it
 * cannot read with certainty (expansions, redirections, subshells, unknown commands or options
 * that write or execute) is not read-only, and the rule reviewer then asks instead of allowing.
 */

/** Splits a command line into simple commands of literal words; null when it uses more than plain words. */
export function splitPlainCommands(command: string): string[][] | null {
  const text = command.replace(/(^|\s)(?:[12]?>\s*\/dev\/null|2>&1)(?=\s|$|[;|&])/g, "$1");
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length === 0) return false;
    commands.push(words);
    words = [];
    return true;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? "";
    if (quote === "'") {
      if (ch === "'") quote = null;
      else word = (word ?? "") + ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === "$" || ch === "`") return null;
      else if (ch === "\\" && /["\\$`]/.test(text[i + 1] ?? "")) word = (word ?? "") + (text[++i] ?? "");
      else word = (word ?? "") + ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= "";
    } else if (/\s/.test(ch) && ch !== "\n") {
      endWord();
    } else if (ch === "\n" || ch === ";" || ch === "|" || ch === "&") {
      const pair = text.slice(i, i + 2);
      if (ch === "&" && pair !== "&&") return null;
      if (pair === "&&" || pair === "||") i++;
      if (!endCommand() && ch !== "\n") return null;
    } else if (ch === "#" && word === null) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else if (ch === "\\") {
      const next = text[++i] ?? "";
      if (next !== "\n") word = (word ?? "") + next;
    } else if (/[$`()<>{}!]/.test(ch)) {
      return null;
    } else {
      word = (word ?? "") + ch;
    }
  }
  if (quote !== null) return null;
  endCommand();
  return commands.length > 0 ? commands : null;
}

const SECRET_PATH =
  /(?:^|[/:=])\.(?:env(?:\.|$)|ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|pgpass|git-credentials|htpasswd)|id_(?:rsa|dsa|ecdsa|ed25519)|\.(?:pem|key|p12|pfx)$|credentials|secret|token|shadow/i;

/** A path a read-only command may name: relative, inside the working directory, not a secret. */
function isWorkspacePath(path: string): boolean {
  if (/^[/~]/.test(path) || /(?:^|\/)\.\.(?:\/|$)/.test(path) || SECRET_PATH.test(path)) return false;
  // A glob in a component starting with a dot could expand to dotfiles such as `.env`.
  return !/(?:^|\/)\.[^/]*[*?[]/.test(path);
}

type TReadOnlyRule = { forbidden?: RegExp; patternFirst?: boolean; anyText?: boolean; subcommands?: Set<string> };

const GIT_READS = new Set(["status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "shortlog", "describe", "grep"]);
const RULES: Record<string, TReadOnlyRule> = {
  ls: {},
  cat: {},
  head: {},
  tail: { forbidden: /^(?:-[a-zA-Z]*[fF]|--follow)/ },
  wc: {},
  stat: {},
  du: {},
  tree: { forbidden: /^-[a-zA-Z]*o|^--fromfile/ },
  diff: { forbidden: /^--to-file|^--from-file/ },
  sort: { forbidden: /^(?:-[a-zA-Z]*o|--output|--compress-program)/ },
  grep: { forbidden: /^(?:-[a-zA-Z]*f|--file)/, patternFirst: true },
  egrep: { forbidden: /^(?:-[a-zA-Z]*f|--file)/, patternFirst: true },
  fgrep: { forbidden: /^(?:-[a-zA-Z]*f|--file)/, patternFirst: true },
  rg: { forbidden: /^(?:--pre|-[a-zA-Z]*f|--file|-z|--search-zip)/, patternFirst: true },
  find: { forbidden: /^-(?:delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/ },
  git: { forbidden: /^(?:--output|--ext-diff|-o$|--exec|--upload-pack)/, subcommands: GIT_READS },
  echo: { anyText: true },
  pwd: {},
  basename: { anyText: true },
  dirname: { anyText: true },
  realpath: {},
  which: { anyText: true },
  whoami: {},
  uname: {},
  date: { forbidden: /^(?:-[a-zA-Z]*s|--set)/ },
  true: {},
};

/** Whether one simple command is on the read-only list with no option that writes or executes. */
function isReadOnlyCommand(words: string[]): boolean {
  const [name = "", ...args] = words;
  const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined;
  if (!rule) return false;
  if (rule.subcommands) {
    // The subcommand must come first: global git options such as `-c core.pager=…` can run programs.
    if (!rule.subcommands.has(args[0] ?? "")) return false;
    args.shift();
  }
  if (rule.anyText) return true;
  if (rule.forbidden && args.some((a) => rule.forbidden?.test(a))) return false;
  const usesPatternFlag = args.some((a) => /^(?:-[a-zA-Z]*e|--regexp)/.test(a));
  let skippedPattern = !rule.patternFirst || usesPatternFlag;
  for (const arg of args) {
    if (arg.startsWith("-")) {
      const value = /^--[\w-]+=(.+)$/.exec(arg)?.[1];
      if (value !== undefined && !isWorkspacePath(value)) return false;
      continue;
    }
    if (!skippedPattern) {
      skippedPattern = true;
      continue;
    }
    if (!isWorkspacePath(arg)) return false;
  }
  return true;
}

/** True when every command of the line is a plain read of the working directory. */
export function isClearlyReadOnly(command: string): boolean {
  const commands = splitPlainCommands(command);
  return commands?.every(isReadOnlyCommand) ?? false;
}
