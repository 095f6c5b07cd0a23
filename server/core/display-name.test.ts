import { describe, expect, it } from "vitest";
import { displayNameKey, ZDisplayName } from "./display-name";

describe("displayNameKey: the names that are one name", () => {
  it.each([
    ["ALICE", "case"],
    ["Ａｌｉｃｅ", "fullwidth letters (NFKC)"],
    ["Al\u200Bice", "a zero-width space"],
    ["A\u00ADlice", "a soft hyphen"],
    ["  Alice ", "spaces around"],
    ["Alice\u00A0", "a no-break space"],
  ])("%j is Alice (%s)", (name) => {
    expect(displayNameKey(name)).toBe(displayNameKey("Alice"));
  });

  it("a composed letter and the same letter with a combining mark are one name, in any case", () => {
    expect(displayNameKey("Zoe\u0308")).toBe(displayNameKey("Zoë"));
    expect(displayNameKey("ZOE\u0308")).toBe(displayNameKey("zoë"));
    expect(displayNameKey("Ale\u0301x")).toBe(displayNameKey("ALÉX"));
  });

  it("inner white space counts once, of whatever kind", () => {
    expect(displayNameKey("Ada\u3000 Lovelace")).toBe(displayNameKey("ada lovelace"));
  });

  it("distinct letters stay distinct: the Turkish dotless and dotted i, é and e", () => {
    const keys = ["Alice", "Alıce", "Alİce", "Alicé"].map(displayNameKey);
    expect(new Set(keys).size).toBe(4);
    // Upper-case dotless and dotted forms meet their lower-case ones.
    expect(displayNameKey("ALIce")).toBe(displayNameKey("alice"));
    expect(displayNameKey("Alİce")).toBe(displayNameKey("ali\u0307ce"));
  });

  it("is stable: the key of a key is itself", () => {
    for (const name of ["Ａｌｉｃｅ", "ZOË", "Alİce", "ǅemal", "ﬁona"]) expect(displayNameKey(displayNameKey(name))).toBe(displayNameKey(name));
  });
});

describe("ZDisplayName", () => {
  it("trims and accepts an ordinary name", () => {
    expect(ZDisplayName.parse("  Ada Lovelace ")).toBe("Ada Lovelace");
  });

  it.each([
    ["", "cannot be empty"],
    ["\u200B\u200D", "at least one visible character"],
    ["Ada\nLovelace", "control characters"],
    ["x".repeat(101), "at most 100 characters"],
  ])("refuses %j with a sentence", (name, sentence) => {
    const parsed = ZDisplayName.safeParse(name);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain(sentence);
  });
});
