import { z } from "zod";

/** What the server admits as input attachments and how many bytes it keeps per file and per run. */
export type TMediaPolicy = {
  /** Largest single attachment (input or reply), in bytes. */
  maxFileBytes: number;
  /** Largest sum of one run's input attachments, in bytes. */
  maxRunBytes: number;
  /** Media types admitted as input attachments (lowercase, no parameters). */
  allowedTypes: readonly string[];
  /** Characters of attached text documents a model turn may receive; the rest becomes a labelled fact. */
  contextChars: number;
  /**
   * How long stored media outlives its last use, in milliseconds (null: kept for as long as the
   * database is). Past it, a blob no run uses any more is deleted (server/host/media/retention.ts).
   */
  retentionMs: number | null;
};

const MIB = 1024 * 1024;

/** The defaults: 10 MiB a file, 25 MiB a run, common images, plain-text documents, JSON and PDF. */
export const DEFAULT_MEDIA_POLICY: TMediaPolicy = {
  maxFileBytes: 10 * MIB,
  maxRunBytes: 25 * MIB,
  allowedTypes: ["image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "text/markdown", "text/csv", "application/json", "application/pdf"],
  contextChars: 100_000,
  retentionMs: null,
};

const DAY_MS = 86_400_000;
/** The longest retention COUNTERSIGN_MEDIA_RETENTION_DAYS takes (100 years): past it, leave it unset. */
const MAX_RETENTION_DAYS = 36_500;

/** COUNTERSIGN_MEDIA_RETENTION_DAYS: unset or empty keeps media; else a number of days above 0 (fractions allowed). */
function retentionFromEnv(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === "") return null;
  const days = Number(raw.trim());
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !(days > 0) || days > MAX_RETENTION_DAYS) {
    throw new Error(`Invalid configuration: COUNTERSIGN_MEDIA_RETENTION_DAYS must be a number of days above 0 and at most ${MAX_RETENTION_DAYS} (e.g. 30 or 0.5), or unset to keep media, got ${JSON.stringify(raw)}.`);
  }
  return Math.max(1, Math.round(days * DAY_MS));
}

const positiveInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`Invalid configuration: ${name} must be a whole number of at least 1, got ${JSON.stringify(raw)}.`);
  return value;
};

/** The media policy from COUNTERSIGN_MEDIA_* (a bad value stops the boot with a sentence). */
export function mediaPolicyFromEnv(env: Readonly<Record<string, string | undefined>>): TMediaPolicy {
  const maxFileBytes = positiveInt("COUNTERSIGN_MEDIA_MAX_FILE_BYTES", env.COUNTERSIGN_MEDIA_MAX_FILE_BYTES, DEFAULT_MEDIA_POLICY.maxFileBytes);
  const maxRunBytes = positiveInt("COUNTERSIGN_MEDIA_MAX_RUN_BYTES", env.COUNTERSIGN_MEDIA_MAX_RUN_BYTES, DEFAULT_MEDIA_POLICY.maxRunBytes);
  const contextChars = positiveInt("COUNTERSIGN_MEDIA_CONTEXT_CHARS", env.COUNTERSIGN_MEDIA_CONTEXT_CHARS, DEFAULT_MEDIA_POLICY.contextChars);
  const types = env.COUNTERSIGN_MEDIA_TYPES;
  const allowedTypes = types ? types.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean) : DEFAULT_MEDIA_POLICY.allowedTypes;
  for (const t of allowedTypes) if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(t)) throw new Error(`Invalid configuration: COUNTERSIGN_MEDIA_TYPES: ${JSON.stringify(t)} is not a media type.`);
  return { maxFileBytes, maxRunBytes, allowedTypes, contextChars, retentionMs: retentionFromEnv(env.COUNTERSIGN_MEDIA_RETENTION_DAYS) };
}

/**
 * The largest `POST /v1/responses` (and AG-UI, `/v1/live` frame) body: the run's attachments in
 * base64 (4 bytes per 3) plus the 1 MiB every other body may take.
 */
export const maxBodyBytesFor = (policy: TMediaPolicy): number => Math.ceil(policy.maxRunBytes / 3) * 4 + 4096 + MIB;

/** An attachment's name: a file name, no directories, no control characters. */
export const ZAttachmentName = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => ![...n].some((c) => c === "/" || c === "\\" || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) && n !== "." && n !== "..", "a file name without slashes or control characters");

/** One input attachment as the client sends it: new bytes (base64), or media it stored before. */
export const ZAttachmentInput = z.union([
  z.strictObject({ name: ZAttachmentName, mediaType: z.string().min(3).max(127), data: z.string().max(200 * MIB).describe("The file's bytes, base64") }),
  z.strictObject({ mediaId: z.string().min(1).describe("Media this user attached before (an `id` of an earlier run's attachment)"), name: ZAttachmentName.optional() }),
]);
export type TAttachmentInput = z.infer<typeof ZAttachmentInput>;
export const ZAttachmentInputs = z.array(ZAttachmentInput).max(32);

/** The facts of an admitted attachment, recorded on the run (never its bytes). */
export const ZAttachmentFact = z.object({ id: z.string(), name: z.string(), mediaType: z.string(), size: z.number().int(), sha256: z.string() });
export type TAttachmentFact = z.infer<typeof ZAttachmentFact>;

/** Images a model receives as image parts. */
export const IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** Documents a model receives as (bounded) text. */
export const isTextType = (mediaType: string): boolean => mediaType.startsWith("text/") || mediaType === "application/json";

/** Types a browser would render or run: always served as downloads. */
export const isActiveContent = (mediaType: string): boolean => /^(text\/html|image\/svg\+xml|application\/xhtml\+xml|text\/xml|application\/xml|text\/javascript|application\/javascript)$/.test(mediaType);

/** The leading bytes that identify each image type the policy may admit. */
const MAGIC: Record<string, (b: Uint8Array) => boolean> = {
  "image/png": (b) => b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47,
  "image/jpeg": (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => b.length >= 6 && String.fromCharCode(...b.subarray(0, 4)) === "GIF8",
  "image/webp": (b) => b.length >= 12 && String.fromCharCode(...b.subarray(0, 4)) === "RIFF" && String.fromCharCode(...b.subarray(8, 12)) === "WEBP",
  "application/pdf": (b) => b.length >= 5 && String.fromCharCode(...b.subarray(0, 5)) === "%PDF-",
};

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Why bytes are not what their declared type says (null when they are, as far as the type can be checked). */
export function contentMismatch(mediaType: string, bytes: Uint8Array): string | null {
  const magic = MAGIC[mediaType];
  if (magic) return magic(bytes) ? null : `its bytes are not a ${mediaType} file`;
  if (isTextType(mediaType)) {
    try {
      UTF8.decode(bytes);
    } catch {
      return "it is not UTF-8 text";
    }
  }
  return null;
}

const BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  txt: "text/plain",
  log: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  pdf: "application/pdf",
  html: "text/html",
  htm: "text/html",
  patch: "text/x-diff",
  diff: "text/x-diff",
  zip: "application/zip",
};

/** A reply file's media type from its name (the host never runs content through a sniffer it trusts). */
export const mediaTypeOfName = (name: string): string => BY_EXTENSION[name.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";

/** A size for people: "812 B", "14.2 KiB", "3.1 MiB". */
export const formatBytes = (n: number): string => (n < 1024 ? `${n} B` : n < MIB ? `${(n / 1024).toFixed(1)} KiB` : `${(n / MIB).toFixed(1)} MiB`);
