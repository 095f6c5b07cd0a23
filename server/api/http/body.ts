import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { DomainError } from "../../core/errors";
import { assertStorableJson, MAX_BODY_BYTES, readBodyText } from "../shared/request-body";

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
