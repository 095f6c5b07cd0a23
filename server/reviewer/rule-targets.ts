import type { TLooseCommand } from "./rule-commands";
import type { TRedirect } from "./shell-words";

/**
 * Which files a command writes, deletes or uploads, read from its exact words. Options that take
 * a value are skipped so their value is not mistaken for a file (`truncate -s 0 f`, `sed -e s/a/b/ f`).
 */

/** Commands that delete or change the files they name. */
export const WRITERS = new Set(["rm", "rmdir", "unlink", "shred", "srm", "wipe", "touch", "mkdir", "tee", "mv", "truncate", "cp", "install", "ln", "rsync", "dd", "sed", "perl", "chmod", "chown", "chgrp", "tar", "unzip"]);

/** Per command, the options whose value is the next word. */
const VALUE_OPTIONS: Record<string, RegExp> = {
  truncate: /^(?:-[sr]|--size|--reference)$/,
  touch: /^(?:-[dtr]|--date|--reference)$/,
  mkdir: /^(?:-[mZ]|--mode|--context)$/,
  shred: /^(?:-[ns]|--iterations|--size)$/,
  cp: /^(?:-[St]|--suffix|--target-directory)$/,
  mv: /^(?:-[St]|--suffix|--target-directory)$/,
  ln: /^(?:-[St]|--suffix|--target-directory)$/,
  install: /^(?:-[mogSt]|--mode|--owner|--group|--suffix|--target-directory)$/,
  rsync: /^(?:-e|--rsh|--exclude|--include|--filter|-f)$/,
  scp: /^-[iPFocJlS]$/,
  sftp: /^-[iPFocJlSbBDRs]$/,
  sed: /^(?:-[efl]|--expression|--file|--line-length)$/,
  perl: /^-[eEMIx]$/,
  tar: /^(?:-[fCTX]|--file|--directory|--files-from|--exclude-from)$/,
  unzip: /^-[dx]$/,
};

/** The non-option words of a command, skipping option values and honouring `--`. */
export function operandsOf(c: TLooseCommand): string[] {
  const takesValue = VALUE_OPTIONS[c.name];
  const operands: string[] = [];
  for (let i = 0; i < c.args.length; i++) {
    const arg = c.args[i] ?? "";
    if (arg === "--") return [...operands, ...c.args.slice(i + 1)];
    if (arg.startsWith("-") && arg.length > 1) {
      if (takesValue?.test(arg)) i++;
      continue;
    }
    operands.push(arg);
  }
  return operands;
}

/** The value of an option given as `-x value`, `-xvalue`, `--long value` or `--long=value`. */
function optionValue(args: string[], short: string | null, long: string | null): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if ((short && arg === short) || (long && arg === long)) return args[i + 1] ?? null;
    if (long && arg.startsWith(`${long}=`)) return arg.slice(long.length + 1);
    if (short && arg.startsWith(short) && arg.length > short.length && !arg.startsWith("--")) return arg.slice(short.length);
  }
  return null;
}

const isRemote = (operand: string): boolean => /^(?:[\w.-]+@)?[\w.-]+:(?!\/\/)|^(?:rsync|sftp|scp):\/\//.test(operand) && !/^\.{0,2}\//.test(operand);

/** The files a command deletes or changes (not counting redirections). */
export function writeTargets(c: TLooseCommand): string[] {
  if (!WRITERS.has(c.name)) return [];
  const operands = operandsOf(c);
  switch (c.name) {
    case "cp":
    case "install":
    case "ln":
    case "rsync": {
      const into = optionValue(c.args, "-t", "--target-directory");
      if (into) return [into];
      const last = operands.at(-1);
      return operands.length > 1 && last && !isRemote(last) ? [last] : [];
    }
    case "dd":
      return c.args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3));
    case "sed":
    case "perl": {
      if (!c.args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a))) return [];
      const scripted = c.args.some((a) => /^(?:-[eEf]|--expression|--file)/.test(a));
      return scripted ? operands : operands.slice(1);
    }
    case "chmod":
    case "chown":
    case "chgrp": {
      // `chmod -x f`: a mode can look like an option; otherwise the first operand is the mode or owner.
      const referenced = c.args.some((a) => a.startsWith("--reference"));
      const dashMode = c.name === "chmod" && c.args.some((a) => /^-[rwxXst]+$/.test(a));
      return referenced || dashMode ? operands : operands.slice(1);
    }
    case "tar": {
      // `tar -xf a.tgz`, `tar --extract …` or the old style `tar xzf a.tgz`.
      const extracts = c.args.some((a, i) => /^-[a-zA-Z]*x|^--(?:extract|get)$/.test(a) || (i === 0 && /^[a-zA-Z]*x[a-zA-Z]*$/.test(a)));
      const into = optionValue(c.args, "-C", "--directory");
      return extracts && into ? [into] : [];
    }
    case "unzip": {
      const into = optionValue(c.args, "-d", null);
      return into ? [into] : [];
    }
    default:
      return operands;
  }
}

/** A `curl` data option's file: `@file`, `name@file` (urlencode), `name=@file` or `name=<file` (forms). */
function curlFile(option: string, value: string): string | null {
  if (/^(?:-T|--upload-file)$/.test(option)) return value === "." ? null : value;
  if (/^(?:-F|--form)$/.test(option)) return /^[^=]*=[@<]([^;]+)/.exec(value)?.[1] ?? null;
  if (option === "--data-urlencode") return /^[^=]*@(.+)$/.exec(value)?.[1] ?? null;
  return value.startsWith("@") ? value.slice(1) : null;
}

const CURL_DATA = /^(?:-d|-F|-T|--data|--data-binary|--data-raw|--data-ascii|--data-urlencode|--json|--form|--upload-file)$/;

/** The local files a command sends to another host (`-` is its standard input). */
export function uploadedFiles(c: TLooseCommand, redirects: TRedirect[]): string[] {
  const files: string[] = [];
  if (c.name === "curl") {
    for (let i = 0; i < c.args.length; i++) {
      const arg = c.args[i] ?? "";
      const long = /^(--[\w-]+)=(.*)$/.exec(arg);
      const short = /^-[a-zA-Z]*([dFT])(.+)$/.exec(arg);
      const bundled = /^-[a-zA-Z]*([dFT])$/.exec(arg);
      const [option, value] = long ? [long[1] ?? "", long[2] ?? ""] : short ? [`-${short[1]}`, short[2] ?? ""] : bundled ? [`-${bundled[1]}`, c.args[++i] ?? ""] : CURL_DATA.test(arg) ? [arg, c.args[++i] ?? ""] : ["", ""];
      const file = CURL_DATA.test(option) ? curlFile(option, value) : null;
      if (file) files.push(file);
    }
  }
  if (c.name === "wget") files.push(...[optionValue(c.args, null, "--post-file"), optionValue(c.args, null, "--body-file")].filter((f): f is string => f !== null));
  if (/^(?:nc|ncat|netcat|socat|telnet)$/.test(c.name)) {
    files.push(...redirects.filter((r) => r.op === "<").map((r) => r.target));
    if (c.name === "socat") files.push(...c.args.flatMap((a) => /^(?:FILE|OPEN|GOPEN|READ|CREATE):([^,]+)/i.exec(a)?.[1] ?? []));
    if (!redirects.some((r) => r.op === "<")) files.push("-");
  }
  if (c.name === "scp" || c.name === "rsync" || c.name === "sftp") {
    const operands = operandsOf(c);
    const last = operands.at(-1);
    if (last && isRemote(last)) files.push(...operands.slice(0, -1).filter((o) => !isRemote(o)));
  }
  return files;
}

/** The directory a `python -m http.server` serves to the network (`-d`/`--directory`, else the working directory). */
export function servedDirectory(c: TLooseCommand): string | null {
  const module = c.args[c.args.indexOf("-m") + 1] ?? "";
  if (!/^python[\d.]*$/.test(c.name) || !c.args.includes("-m") || !/^(?:http\.server|SimpleHTTPServer)$/.test(module)) return null;
  return optionValue(c.args, "-d", "--directory") ?? ".";
}
