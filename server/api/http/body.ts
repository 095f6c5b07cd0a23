import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { DomainError } from "../../core/errors";
import { isClientGone } from "./errors";

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

/** Reads a JSON body: 415 unless JSON, 413 past 1 MiB (checked while reading), 400 if malformed or not UTF-8. */
export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  return (await readSizedJson(req, maxBytes)).value;
}

/**
 * A body that may carry attachments: read up to `maxBytes` (their base64 and the rest), then what
 * is not attachment data must still fit the 1 MiB every body has (413 otherwise).
 */
export async function readJsonWithAttachments(req: IncomingMessage, maxBytes: number, attachmentsOf: (value: unknown) => unknown): Promise<unknown> {
  const { value, bytes } = await readSizedJson(req, maxBytes, MAX_BODY_BYTES);
  if (bytes - attachmentDataLength(attachmentsOf(value)) > MAX_BODY_BYTES) throw new DomainError("payload_too_large", `The body without its attachments' data is larger than ${MAX_BODY_BYTES} bytes.`);
  return value;
}

/** Characters of base64 `data` in a list of attachments (0 for anything else). */
export function attachmentDataLength(attachments: unknown): number {
  if (!Array.isArray(attachments)) return 0;
  let total = 0;
  for (const a of attachments) if (a && typeof a === "object" && typeof (a as { data?: unknown }).data === "string") total += (a as { data: string }).data.length;
  return total;
}

/** `tooLargeUnlessJson`: a body past this many bytes that is not valid JSON is a 413 (it could only have been allowed as attachments). */
async function readSizedJson(req: IncomingMessage, maxBytes: number, tooLargeUnlessJson = Number.POSITIVE_INFINITY): Promise<{ value: unknown; bytes: number }> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json" && !type?.endsWith("+json")) {
    req.resume();
    throw new DomainError("unsupported_media_type", "Send the body as JSON with Content-Type: application/json.");
  }
  const text = await readBodyText(req, maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (Buffer.byteLength(text) > tooLargeUnlessJson) throw new DomainError("payload_too_large", `The body is larger than ${tooLargeUnlessJson} bytes.`);
    throw new DomainError("invalid_json", "The body is not valid JSON.");
  }
  assertStorableJson(value, "The body");
  return { value, bytes: Buffer.byteLength(text) };
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

/** Describes the first problems of a failed zod parse as one sentence. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.join(".");
      if (issue.code === "unrecognized_keys") return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}${path ? ` in ${path}` : ""}`;
      return `${path || "body"}: ${issue.message}`;
    })
    .join("; ");
}

/** Parses a value with a strict schema, answering 400 with what is wrong. */
export function parseBody<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new DomainError("invalid_request", `Invalid request: ${describeIssues(parsed.error)}.`);
  return parsed.data;
}
