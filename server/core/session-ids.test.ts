import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newId } from "./ids";
import { isSessionIdMintedFor, mintSessionId } from "./session-ids";

const key = randomBytes(32);

describe("session ids minted before their session exists", () => {
  it("look like every session id and verify only for the user they were minted for, under the same key", () => {
    const id = mintSessionId(key, "user_a");
    expect(id).toMatch(/^sess_[0-9a-f]{32}$/);
    expect(isSessionIdMintedFor(key, "user_a", id)).toBe(true);
    expect(isSessionIdMintedFor(key, "user_b", id)).toBe(false);
    expect(isSessionIdMintedFor(randomBytes(32), "user_a", id)).toBe(false);
  });

  it("a changed character, a stored session's random id or a malformed id never verifies", () => {
    const id = mintSessionId(key, "user_a");
    for (let i = 5; i < id.length; i++) {
      const flipped = `${id.slice(0, i)}${id[i] === "0" ? "1" : "0"}${id.slice(i + 1)}`;
      expect(isSessionIdMintedFor(key, "user_a", flipped), flipped).toBe(false);
    }
    expect(isSessionIdMintedFor(key, "user_a", newId("sess"))).toBe(false);
    for (const bad of ["", "sess_", `${id}0`, id.toUpperCase(), id.replace("sess_", "resp_")]) expect(isSessionIdMintedFor(key, "user_a", bad)).toBe(false);
  });
});
