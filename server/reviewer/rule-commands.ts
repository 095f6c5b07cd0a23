/**
 * A deliberately loose reading of a shell command line, used to find danger. It over-approximates:
 * quotes are dropped and every `;`, `&&`, `||`, `|`, `$(`, backtick or parenthesis starts a new
 * command, so a dangerous command hidden in a subshell, `sh -c "…"` or after `sudo` is still seen.
 * (Allowing uses the strict reader in `read-only.ts` instead.)
 */

/**
 * One command found in the line: its base name, its words, whether a privilege wrapper ran it and
 * whether `xargs` adds operands read from its input (so its operands are not all on the line).
 */
export type TLooseCommand = { name: string; args: string[]; elevated: boolean; fromStdin?: boolean };

const INVISIBLE = /[\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g;
const PRIVILEGE_WRAPPERS = new Set(["sudo", "doas", "pkexec", "runuser", "sudoedit"]);
const PREFIXES = new Set(["nohup", "time", "command", "exec", "builtin", "nice", "ionice", "then", "do", "else", "!", "{", "eval", "env", "xargs", "timeout", "stdbuf", "watch", "strace", "chronic"]);
const SHELLS = /^(?:ba|z|da|k|fi|c|tc)?sh$/;
/** Wrapper options that take a value, so the value is not mistaken for the command name. */
const VALUE_FLAGS: Record<string, string[]> = {
  sudo: ["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "--user", "--group"],
  doas: ["-u", "-C"],
  runuser: ["-u", "-g", "--user", "--group"],
  xargs: ["-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  nice: ["-n"],
  ionice: ["-c", "-n", "-p"],
  env: ["-u", "-C", "--unset", "--chdir"],
};

/** The views danger rules run on: normalized, and with quotes and backslashes removed (`r''m`, `"r"m`). */
export function dangerViews(command: string): string[] {
  const normalized = command.normalize("NFKC").replace(INVISIBLE, "").replace(/\\\r?\n/g, " ");
  const dequoted = normalized.replace(/['"\\]/g, "");
  return dequoted === normalized ? [normalized] : [normalized, dequoted];
}

/**
 * One simple command's words with wrappers (`sudo`, `env`, `xargs`, `timeout`, …) and variable
 * assignments peeled off: the privilege wrappers met on the way, then either the command that runs
 * or, for `sh -c …`, the words after the shell's options (the script and its arguments).
 */
export function peelWrappers(words: string[]): { wrappers: TLooseCommand[]; command: TLooseCommand | null; shellArgs: string[] | null } {
  const wrappers: TLooseCommand[] = [];
  let elevated = false;
  let fromStdin = false;
  let rest = words;
  while (rest.length > 0) {
    const word = rest[0] ?? "";
    const base = word.slice(word.lastIndexOf("/") + 1);
    if (PRIVILEGE_WRAPPERS.has(base) || PREFIXES.has(base)) {
      if (PRIVILEGE_WRAPPERS.has(base)) {
        elevated = true;
        wrappers.push({ name: base, args: rest.slice(1), elevated: true });
      }
      fromStdin ||= base === "xargs";
      rest = skipOptions(rest.slice(1), VALUE_FLAGS[base] ?? []);
      if (base === "timeout" && /^\d/.test(rest[0] ?? "")) rest = rest.slice(1);
    } else if (/^[A-Za-z_]\w*=/.test(word)) {
      rest = rest.slice(1);
    } else if (SHELLS.test(base) && rest.slice(1).some((w) => /^-[a-z]*c[a-z]*$/.test(w))) {
      const flagEnd = rest.findIndex((w, i) => i > 0 && !w.startsWith("-"));
      return { wrappers, command: null, shellArgs: flagEnd < 0 ? [] : rest.slice(flagEnd) };
    } else {
      return { wrappers, command: { name: base, args: rest.slice(1), elevated, ...(fromStdin ? { fromStdin } : {}) }, shellArgs: null };
    }
  }
  return { wrappers, command: null, shellArgs: null };
}

/** The commands of a line, read loosely (see the module comment). */
export function looseCommands(view: string): TLooseCommand[] {
  const commands: TLooseCommand[] = [];
  for (const segment of view.split(/\|\||&&|\$\(|[;&|\n`()]/)) {
    let words = segment.trim().split(/\s+/).filter(Boolean);
    while (words.length > 0) {
      const peeled = peelWrappers(words);
      commands.push(...peeled.wrappers);
      if (peeled.command) commands.push(peeled.command);
      // Read loosely, a shell's `-c` script is already split into words: the command continues there.
      words = peeled.shellArgs ?? [];
    }
  }
  return commands;
}

function skipOptions(words: string[], valueFlags: string[]): string[] {
  let i = 0;
  while (i < words.length && (words[i] ?? "").startsWith("-")) {
    i += valueFlags.includes(words[i] ?? "") ? 2 : 1;
  }
  return words.slice(i);
}

/** Arguments that are not options (after `--`, everything is an operand). */
export function operands(args: string[]): string[] {
  const end = args.indexOf("--");
  const before = (end < 0 ? args : args.slice(0, end)).filter((a) => !a.startsWith("-"));
  return end < 0 ? before : [...before, ...args.slice(end + 1)];
}

const SYSTEM_ROOTS = "(?:bin|boot|dev|etc|home|lib\\w*|opt|proc|root|sbin|srv|sys|usr|var|users|system|library|applications|private|mnt|media|snap)";
const BROAD = new RegExp(`^(?:/+\\.?\\*?|~/?\\*?|\\$\\{?home\\}?/?\\*?|\\.{1,2}/?\\*?|\\*|\\.\\*|\\*/\\*|/${SYSTEM_ROOTS}/?\\*?)$`, "i");
const SYSTEM_FILE = /^\/(?:bin|boot|etc|lib\w*|sbin|usr|sys|proc|var\/lib|var\/log|System|Library)\/|^\/dev\/(?!null$|zero$|stdout$|stderr$|fd\/)/i;

/** `/`, `~`, `$HOME`, the workspace itself (`.`, `*`) or a top-level system directory. */
export function isBroadTarget(path: string): boolean {
  return BROAD.test(path);
}

/** `/`, `~`, `$HOME` or a top-level system directory, but not the workspace itself. */
export function isRootOrHome(path: string): boolean {
  return BROAD.test(path) && !/^(?:\.{1,2}\/?\*?|\*|\.\*|\*\/\*)$/.test(path);
}

/** A path inside a system directory (`/etc/…`, `/usr/…`, a device other than null, zero or stdio). */
export function isSystemFile(path: string): boolean {
  return SYSTEM_FILE.test(path);
}
