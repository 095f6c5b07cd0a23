import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { safeNextPath } from "./safe-next";

const ORIGIN = "http://console.example.com";

describe("post-login destination", () => {
  test.each([
    // Protocol-relative and scheme tricks.
    ["//evil.com", "/"],
    ["//evil.com/answer/x", "/"],
    ["///evil.com", "/"],
    ["https://evil.com", "/"],
    ["https://console.example.com/x", "/"],
    ["https:evil.com", "/"],
    ["https:/evil.com", "/"],
    ["HTTPS://evil.com", "/"],
    ["javascript:alert(1)", "/"],
    ["JavaScript:alert(document.cookie)", "/"],
    [" javascript:alert(1)", "/"],
    ["data:text/html,<script>alert(1)</script>", "/"],
    ["vbscript:msgbox", "/"],
    ["mailto:x@evil.com", "/"],
    // Backslashes: browsers treat them as slashes in http(s) URLs.
    ["/\\evil.com", "/"],
    ["\\/evil.com", "/"],
    ["\\\\evil.com", "/"],
    ["/\\/evil.com", "/"],
    // Tabs and newlines are stripped by the URL parser.
    ["/\t/evil.com", "/"],
    ["/\n/evil.com", "/"],
    ["/\r\n/evil.com", "/"],
    ["\t//evil.com", "/"],
    ["  //evil.com", "/"],
    // Credentials and odd authorities.
    ["//user:pass@evil.com", "/"],
    ["https://console.example.com@evil.com", "/"],
    ["//console.example.com.evil.com/", "/"],
    ["//console.example.com:444/", "/"],
    // Encoded forms stay paths on this origin (never decoded into another host).
    ["/%2F%2Fevil.com", "/%2F%2Fevil.com"],
    ["%2F%2Fevil.com", "/%2F%2Fevil.com"],
    ["/%5Cevil.com", "/%5Cevil.com"],
    ["/.//evil.com", "/evil.com"],
    ["/..//evil.com", "/evil.com"],
    // Nothing, garbage, the login page itself.
    [null, "/"],
    ["", "/"],
    ["/login", "/"],
    ["/login?next=//evil.com", "/"],
    // Same-origin destinations keep their path, query and fragment.
    ["/", "/"],
    ["/responses", "/responses"],
    ["/answer/ask_123?x=1#top", "/answer/ask_123?x=1#top"],
    ["http://console.example.com/approvals?focus=a", "/approvals?focus=a"],
    // A scheme-relative path of the origin's own scheme is a path here, as the browser reads it.
    ["http:responses", "/responses"],
    ["responses", "/responses"],
  ])("%j → %j", (next, expected) => {
    expect(safeNextPath(next, ORIGIN)).toBe(expected);
  });

  test("whatever `next` is, the result is a path that stays on the origin", () => {
    const tricky = fc.constantFrom("/", "\\", "\t", "\n", "%2F", "%5C", ":", "@", ".", "..", "evil.com", "javascript:", "https:", "//", "?", "#");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(tricky, { maxLength: 8 }).map((parts) => parts.join(""))), (next) => {
        const path = safeNextPath(next, ORIGIN);
        expect(path.startsWith("/") && !path.startsWith("//")).toBe(true);
        expect(new URL(path, ORIGIN).origin).toBe(ORIGIN);
      }),
      { numRuns: 2000 },
    );
  });

  test("a bad origin never throws", () => {
    expect(safeNextPath("/x", "not a url")).toBe("/");
  });
});
