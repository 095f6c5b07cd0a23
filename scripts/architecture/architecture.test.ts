import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { DOC, drawFolderGraph, withFolderGraph } from "./draw";
import { parseModule, portsProblem, typeOnlyViolations } from "./type-only";

/**
 * docs/architecture.md shows the folder graph dependency-cruiser draws from the code
 * (`npm run architecture:draw`); this redraws it, so the committed picture matches the code.
 */
describe("the folder layers (docs/architecture.md)", () => {
  test("the committed folder graph is the one the code has now", () => {
    const doc = readFileSync(DOC, "utf8");
    expect(withFolderGraph(doc, drawFolderGraph()), "the folder graph changed: run `npm run architecture:draw` and commit docs/architecture.md").toBe(doc);
  }, 60_000);

  test("the type-only check holds, and refuses values and value imports in a ports file", () => {
    expect(typeOnlyViolations()).toEqual([]);
    const problems = parseModule(
      ['import type { A } from "./a";', 'import { B } from "./b";', "export type C = A;", "export interface D { b: B }", "export const e = 1;", 'export { F } from "./f";'].join("\n"),
    ).map(portsProblem);
    expect(problems).toEqual([null, 'imports "./b" without `import type`', null, null, "exports a value (VariableDeclaration)", 're-exports "./f" without `export type`']);
  });
});
