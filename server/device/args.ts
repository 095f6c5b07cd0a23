import { resolve } from "node:path";
import { parseAllow, type TLocalPolicy } from "./policy";

export type TDeviceOptions = {
  server?: string;
  pair?: string;
  state: string;
  cwd: string;
  maxTimeoutMs: number;
  policy: TLocalPolicy;
};

export const USAGE = `Usage: npm run device -- [--pair TOKEN] --server URL [options]

  --pair TOKEN          one-time pairing token from an admin (console: Devices → Pair); omit to reconnect
  --server URL          the Countersign server, e.g. http://localhost:3000
  --state FILE          where the device keeps its id and credential (default ./countersign-device.json)
  --allow NAME=COMMAND  allow a named node command (repeatable), e.g. --allow uptime=uptime --allow disk="df -h ."
  --deny-pattern REGEX  refuse any invocation with an argument matching REGEX (repeatable)
  --consent allow|deny  the device owner's consent to run commands at all (default allow)
  --cwd DIR             working directory of commands (default: the current directory)
  --max-timeout-ms N    upper bound on any command's run time (default 600000)`;

/** Parses the device's command line; every mistake is a sentence, never a stack trace. */
export function parseDeviceArgs(argv: readonly string[]): { ok: true; options: TDeviceOptions } | { ok: false; message: string; help?: boolean } {
  const allow = new Map<string, string>();
  const denyPatterns: RegExp[] = [];
  let consent: "allow" | "deny" = "allow";
  let server: string | undefined;
  let pair: string | undefined;
  let state = "countersign-device.json";
  let cwd = process.cwd();
  let maxTimeoutMs = 600_000;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const [name, inline] = flag.startsWith("--") && flag.includes("=") ? [flag.slice(0, flag.indexOf("=")), flag.slice(flag.indexOf("=") + 1)] : [flag, undefined];
    if (name === "--help" || name === "-h") return { ok: false, message: USAGE, help: true };
    const value = inline ?? argv[++i];
    if (value === undefined) return { ok: false, message: `${name} needs a value.` };
    switch (name) {
      case "--server":
        try {
          const url = new URL(value);
          if (!["http:", "https:", "ws:", "wss:"].includes(url.protocol)) throw new Error();
        } catch {
          return { ok: false, message: `--server must be an http(s) URL, got ${JSON.stringify(value)}.` };
        }
        server = value;
        break;
      case "--pair":
        if (!value.trim()) return { ok: false, message: "--pair needs the token an admin created." };
        pair = value.trim();
        break;
      case "--state":
        state = value;
        break;
      case "--cwd":
        cwd = resolve(value);
        break;
      case "--allow": {
        const parsed = parseAllow(value);
        if (!parsed) return { ok: false, message: `--allow expects NAME=COMMAND with NAME made of letters, digits, dots, dashes or underscores; got ${JSON.stringify(value)}.` };
        allow.set(parsed.name, parsed.shell);
        break;
      }
      case "--deny-pattern":
        try {
          denyPatterns.push(new RegExp(value));
        } catch {
          return { ok: false, message: `--deny-pattern ${JSON.stringify(value)} is not a valid regular expression.` };
        }
        break;
      case "--consent":
        if (value !== "allow" && value !== "deny") return { ok: false, message: "--consent must be allow or deny." };
        consent = value;
        break;
      case "--max-timeout-ms": {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1 || n > 24 * 3_600_000) return { ok: false, message: "--max-timeout-ms must be a whole number of milliseconds." };
        maxTimeoutMs = n;
        break;
      }
      default:
        return { ok: false, message: `Unknown option ${name}.\n\n${USAGE}` };
    }
  }
  return { ok: true, options: { server, pair, state: resolve(state), cwd, maxTimeoutMs, policy: { allow, denyPatterns, consent } } };
}
