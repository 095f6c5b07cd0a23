import type { IncomingMessage } from "node:http";
import { DomainError } from "../../core/errors";
import { isClientGone } from "./errors";

/*
 * Request bodies as both transports read them: bounded, strictly UTF-8, and JSON values checked
 * for what PostgreSQL cannot store before anything acts on them.
 */

export const MAX_BODY_BYTES = 1024 * 1024;

/** Decodes strictly: a byte sequence that is not UTF-8 is refused, never replaced by U+FFFD. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a whole body as UTF-8 text: 413 past `maxBytes` (declared, or counted while reading), 400
 * when the bytes are not UTF-8 (JSON text must be; silently replacing them would store something
 * the client never sent).
 */
export async function readBodyText(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) {
    req.resume();
    throw new DomainError("payload_too_large", `The body is larger than ${maxBytes} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        req.resume();
        throw new DomainError("payload_too_large", `The body is larger than ${maxBytes} bytes.`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    // Nobody is left to answer: a client going away mid-body is routine, not a server error to log.
    if (isClientGone(error, req)) throw new DomainError("invalid_request", "The connection closed before the request body arrived.");
    throw error;
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new DomainError("invalid_json", "The body is not valid UTF-8; send JSON text encoded as UTF-8.");
  }
}

/** Deeper JSON than this is refused at the boundary (it would overflow the stack when serialized again). */
export const MAX_JSON_DEPTH = 100;

/**
 * What a parsed JSON value holds that PostgreSQL cannot store or that would break later:
 * a NUL character (`\u0000`) or an unpaired surrogate, in a string or a key, or nesting deeper
 * than MAX_JSON_DEPTH.
 * Iterative, so a hostile depth cannot overflow the stack here.
 */
export function storableJsonProblem(value: unknown): "nul" | "surrogate" | "depth" | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) return problem;
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return "depth";
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(v)) {
      const problem = textProblem(key);
      if (problem) return problem;
      stack.push([item, depth + 1]);
    }
  }
  return null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** NUL, or a lone UTF-16 surrogate (only a `\\uD800`-style JSON escape can make one; PostgreSQL's json rejects it). */
function textProblem(text: string): "nul" | "surrogate" | null {
  if (text.includes("\u0000")) return "nul";
  return LONE_SURROGATE.test(text) ? "surrogate" : null;
}

/** The sentence for a problem found by storableJsonProblem. */
export function describeStorableProblem(problem: "nul" | "surrogate" | "depth", what: string): string {
  if (problem === "nul") return `${what} contains a NUL character (\\u0000), which cannot be stored.`;
  if (problem === "surrogate") return `${what} contains an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF), which is not valid Unicode.`;
  return `${what} is nested more than ${MAX_JSON_DEPTH} levels deep.`;
}

/** Throws a 400 naming the problem when `value` is not storable (see storableJsonProblem). */
export function assertStorableJson(value: unknown, what: string): void {
  const problem = storableJsonProblem(value);
  if (problem) throw new DomainError("invalid_request", describeStorableProblem(problem, what));
}

/** A string from a URL (path segment, query value) the database can store: no NUL, no lone surrogate. */
export function assertStorableText(text: string, what: string): void {
  const problem = textProblem(text);
  if (problem) throw new DomainError("invalid_request", describeStorableProblem(problem, what));
}
