/** Keys whose values never reach a trajectory, log or export. */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential|private|card[-_]?number|cvv|cvc|ssn/i;
/** Card-like digit runs (13–19 digits) in free text. */
const CARD_RUN = /\b\d{13,19}\b/g;

export const REDACTED = "[redacted]";

export type TBounds = {
  maxDepth: number;
  maxKeys: number;
  maxString: number;
  maxArray: number;
  /** Told whenever a bound cut something (a string, an array, an object's keys, a level too deep). */
  onCut?: () => void;
  /** Told whenever a value was hidden (a secret-named key's value, a card-like number). */
  onRedact?: () => void;
};
export const DEFAULT_BOUNDS: TBounds = { maxDepth: 6, maxKeys: 100, maxString: 4000, maxArray: 100 };

/**
 * Bounds and redacts structured data for the trajectory: secret-looking keys are replaced,
 * card-like numbers masked, long strings and collections truncated, depth limited. Accessors are
 * not invoked; non-JSON values are dropped.
 */
export function boundAndRedact(value: unknown, bounds: TBounds = DEFAULT_BOUNDS, depth = 0): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string") {
    const masked = value.replace(CARD_RUN, (d) => {
      bounds.onRedact?.();
      return `${"*".repeat(d.length - 4)}${d.slice(-4)}`;
    });
    if (masked.length <= bounds.maxString) return masked;
    bounds.onCut?.();
    return `${masked.slice(0, bounds.maxString)}… [${masked.length - bounds.maxString} more characters]`;
  }
  if (depth >= bounds.maxDepth) {
    bounds.onCut?.();
    return "[too deep]";
  }
  if (typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    const out = value.slice(0, bounds.maxArray).map((v) => boundAndRedact(v, bounds, depth + 1));
    if (value.length > bounds.maxArray) {
      bounds.onCut?.();
      out.push(`[${value.length - bounds.maxArray} more items]`);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let count = 0;
  for (const key of Object.keys(value)) {
    if (count++ >= bounds.maxKeys) {
      bounds.onCut?.();
      out["…"] = `${Object.keys(value).length - bounds.maxKeys} more keys`;
      break;
    }
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (!descriptor || !("value" in descriptor)) continue;
    if (SECRET_KEY.test(key)) {
      bounds.onRedact?.();
      out[key] = REDACTED;
    } else out[key] = boundAndRedact(descriptor.value, bounds, depth + 1);
  }
  return out;
}
