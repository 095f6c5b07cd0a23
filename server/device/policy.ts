import type { TRefusalReason } from "../devices/protocol";

/** The device owner's local policy; the device enforces it whatever the server asks. */
export type TLocalPolicy = {
  /** Named node commands → the shell command each runs (`--allow name=command`). */
  allow: ReadonlyMap<string, string>;
  /** Arguments matching any of these are refused (`--deny-pattern REGEX`). */
  denyPatterns: readonly RegExp[];
  /** The device owner's consent to run anything at all (`--consent allow|deny`). */
  consent: "allow" | "deny";
};

export type TPolicyDecision = { ok: true; shell: string } | { ok: false; reason: TRefusalReason; message: string };

const MAX_ARGS = 64;
const MAX_ARG_BYTES = 4096;

/** Quotes one argument for bash: the device never lets an argument become shell syntax. */
export const shellQuote = (arg: string): string => `'${arg.replace(/'/g, `'\\''`)}'`;

/** Decides one invocation: consent, then the allowlist, then the arguments against the deny patterns. */
export function decide(policy: TLocalPolicy, command: string, args: readonly string[]): TPolicyDecision {
  if (policy.consent !== "allow") {
    return { ok: false, reason: "consent", message: "the device owner has not consented to running commands on this device (--consent deny)." };
  }
  const shell = policy.allow.get(command);
  if (shell === undefined) {
    return { ok: false, reason: "not_allowlisted", message: `${command} is not in the device allowlist.` };
  }
  if (args.length > MAX_ARGS) return { ok: false, reason: "invalid", message: `at most ${MAX_ARGS} arguments are accepted.` };
  for (const arg of args) {
    if (typeof arg !== "string" || arg.includes("\0") || Buffer.byteLength(arg) > MAX_ARG_BYTES) {
      return { ok: false, reason: "invalid", message: "arguments must be strings of at most 4096 bytes without NUL characters." };
    }
  }
  const joined = args.join(" ");
  for (const pattern of policy.denyPatterns) {
    const hit = args.find((arg) => pattern.test(arg)) ?? (pattern.test(joined) ? joined : undefined);
    if (hit !== undefined) return { ok: false, reason: "policy", message: `the argument ${JSON.stringify(hit.slice(0, 200))} matches the device's deny pattern /${pattern.source}/.` };
  }
  return { ok: true, shell: args.length ? `${shell} ${args.map(shellQuote).join(" ")}` : shell };
}

/** Parses one `--allow name=command` value. */
export function parseAllow(value: string): { name: string; shell: string } | null {
  const at = value.indexOf("=");
  if (at <= 0) return null;
  const name = value.slice(0, at).trim();
  const shell = value.slice(at + 1).trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) || shell === "") return null;
  return { name, shell };
}
