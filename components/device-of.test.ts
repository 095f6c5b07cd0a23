import { describe, expect, test } from "vitest";
import { deviceOf } from "./device-of";

describe("deviceOf: a console session's device from its user agent", () => {
  test("browser and system, either alone, or nothing", () => {
    expect(deviceOf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36")).toBe("Chrome · Linux");
    expect(deviceOf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0")).toBe("Edge · Windows");
    expect(deviceOf("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15")).toBe("Safari · macOS");
    expect(deviceOf("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Version/17.1 Mobile/15E148 Safari/604.1")).toBe("Safari · iOS");
    expect(deviceOf("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0")).toBe("Firefox · Linux");
    expect(deviceOf("curl/8.4.0")).toBe("curl");
    expect(deviceOf("node")).toBeNull();
    expect(deviceOf(null)).toBeNull();
  });
});
