/** One difference between the requested and the edited arguments, at a dotted path (`env.HOME`, `args.0`). */
export type TArgumentChange =
  | { kind: "added"; path: string; after: unknown }
  | { kind: "removed"; path: string; before: unknown }
  | { kind: "changed"; path: string; before: unknown; after: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * What an edit changes, leaf by leaf, in the order of the requested arguments then the added
 * ones. Objects are compared key by key; arrays and scalars as whole values (an array that
 * changed shows as one change, which is what an approver reads best).
 */
export function argumentsDiff(before: unknown, after: unknown, path = ""): TArgumentChange[] {
  if (isObject(before) && isObject(after)) {
    const changes: TArgumentChange[] = [];
    const keys = [...Object.keys(before), ...Object.keys(after).filter((k) => !(k in before))];
    for (const key of keys) {
      const at = path ? `${path}.${key}` : key;
      if (!(key in after)) changes.push({ kind: "removed", path: at, before: before[key] });
      else if (!(key in before)) changes.push({ kind: "added", path: at, after: after[key] });
      else changes.push(...argumentsDiff(before[key], after[key], at));
    }
    return changes;
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ kind: "changed", path: path || "arguments", before, after }];
}
