import { describe, expect, it } from "vitest";
import { parseDeviceArgs } from "./args";
import { decide, parseAllow, shellQuote, type TLocalPolicy } from "./policy";

const policy = (extra: Partial<TLocalPolicy> = {}): TLocalPolicy => ({
  allow: new Map([
    ["uptime", "uptime"],
    ["disk", "df -h ."],
  ]),
  denyPatterns: [/^\/etc/, /[;&|`$]/],
  consent: "allow",
  ...extra,
});

describe("device local policy", () => {
  it("runs allowlisted commands with their arguments quoted", () => {
    expect(decide(policy(), "uptime", [])).toEqual({ ok: true, shell: "uptime" });
    expect(decide(policy(), "disk", ["it's"])).toEqual({ ok: true, shell: `df -h . 'it'\\''s'` });
  });

  it("refuses commands outside the allowlist, whatever their name looks like", () => {
    for (const command of ["reboot", "__proto__", "constructor", "uptime ", "UPTIME"]) {
      expect(decide(policy(), command, [])).toMatchObject({ ok: false, reason: "not_allowlisted" });
    }
  });

  it("refuses arguments matching a deny pattern, alone or joined", () => {
    expect(decide(policy(), "disk", ["/etc/shadow"])).toMatchObject({ ok: false, reason: "policy" });
    expect(decide(policy(), "disk", ["a;", "rm"])).toMatchObject({ ok: false, reason: "policy" });
    expect(decide(policy({ denyPatterns: [/a b/] }), "disk", ["a", "b"])).toMatchObject({ ok: false, reason: "policy" });
  });

  it("refuses everything without the owner's consent", () => {
    expect(decide(policy({ consent: "deny" }), "uptime", [])).toMatchObject({ ok: false, reason: "consent" });
  });

  it("refuses malformed arguments", () => {
    expect(decide(policy(), "disk", ["a\0b"])).toMatchObject({ ok: false, reason: "invalid" });
    expect(decide(policy(), "disk", Array.from({ length: 65 }, () => "x"))).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("quotes so that no argument becomes shell syntax", () => {
    expect(shellQuote("$(touch x)")).toBe("'$(touch x)'");
    expect(parseAllow("disk=df -h .")).toEqual({ name: "disk", shell: "df -h ." });
    expect(parseAllow("=x")).toBeNull();
    expect(parseAllow("bad name=x")).toBeNull();
    expect(parseAllow("ok=")).toBeNull();
  });

  it("parses the command line and reports mistakes as sentences", () => {
    const ok = parseDeviceArgs(["--server", "http://127.0.0.1:1", "--allow", "uptime=uptime", "--allow=disk=df -h .", "--deny-pattern", "^/etc", "--consent", "deny"]);
    expect(ok.ok).toBe(true);
    if (ok.ok) {
      expect([...ok.options.policy.allow.entries()]).toEqual([
        ["uptime", "uptime"],
        ["disk", "df -h ."],
      ]);
      expect(ok.options.policy.consent).toBe("deny");
    }
    expect(parseDeviceArgs(["--deny-pattern", "("])).toMatchObject({ ok: false, message: expect.stringContaining("not a valid regular expression") });
    expect(parseDeviceArgs(["--consent", "maybe"])).toMatchObject({ ok: false });
    expect(parseDeviceArgs(["--bogus", "1"])).toMatchObject({ ok: false, message: expect.stringContaining("Unknown option --bogus") });
    expect(parseDeviceArgs(["--server", "ftp://x"])).toMatchObject({ ok: false });
    expect(parseDeviceArgs(["--pair"])).toMatchObject({ ok: false, message: "--pair needs a value." });
  });
});
