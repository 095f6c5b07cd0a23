import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { DomainError } from "../../core/errors";

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a JSON body: 415 unless JSON, 413 past 1 MiB (checked while reading), 400 if malformed. */
export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json" && !type?.endsWith("+json")) {
    req.resume();
    throw new DomainError("unsupported_media_type", "Send the body as JSON with Content-Type: application/json.");
  }
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) {
    req.resume();
    throw new DomainError("payload_too_large", `The body is larger than ${maxBytes} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.resume();
      throw new DomainError("payload_too_large", `The body is larger than ${maxBytes} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError("invalid_json", "The body is not valid JSON.");
  }
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
