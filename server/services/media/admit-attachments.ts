import type { Db } from "../../../db/client";
import { mediaFactsOf, sha256Of, storeMedia, touchMedia } from "../../../db/repositories/media";
import { DomainError } from "../../core/errors";
import { contentMismatch, formatBytes, type TAttachmentFact, type TAttachmentInput, type TMediaPolicy } from "../../core/media";

/** An attachment that passed every check: new bytes to store, or media the owner holds already. */
export type TCheckedAttachment =
  | { kind: "new"; name: string; mediaType: string; bytes: Uint8Array; sha256: string }
  | { kind: "stored"; fact: TAttachmentFact };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const normalizeType = (raw: string): string => (raw.split(";")[0] ?? "").trim().toLowerCase();

/**
 * Checks a run's input attachments before anything is written: 415 for a type outside the
 * allowlist, 413 past the per-file or per-run byte limit, 422 for data that is not base64, bytes
 * that are not what their type says, or a `mediaId` the caller does not hold (another user's
 * media looks exactly like missing media).
 */
export async function checkAttachments(db: Db, policy: TMediaPolicy, ownerId: string, inputs: readonly TAttachmentInput[]): Promise<TCheckedAttachment[]> {
  const checked: TCheckedAttachment[] = [];
  const admitted = new Set(policy.allowedTypes);
  const allowlist = policy.allowedTypes.join(", ");
  const referenced = await mediaFactsOf(
    db,
    ownerId,
    inputs.flatMap((a) => ("mediaId" in a ? [a.mediaId] : [])),
  );
  let total = 0;
  for (const [i, input] of inputs.entries()) {
    const at = `attachments[${i}]`;
    if ("mediaId" in input) {
      const fact = referenced.find((m) => m.id === input.mediaId);
      if (!fact) throw new DomainError("validation_failed", `${at}: no media ${input.mediaId} is stored for you; attach the file's data instead.`);
      if (!admitted.has(fact.mediaType)) throw new DomainError("unsupported_media_type", `${at}: ${fact.mediaType} is not an admitted attachment type (admitted: ${allowlist}).`);
      if (fact.size > policy.maxFileBytes) throw new DomainError("payload_too_large", `${at} is ${formatBytes(fact.size)}, over the ${formatBytes(policy.maxFileBytes)} limit for one attachment.`);
      total += fact.size;
      checked.push({ kind: "stored", fact: { id: fact.id, name: input.name ?? fact.id, mediaType: fact.mediaType, size: fact.size, sha256: fact.sha256 } });
      continue;
    }
    const mediaType = normalizeType(input.mediaType);
    if (!admitted.has(mediaType)) throw new DomainError("unsupported_media_type", `${at} "${input.name}": ${mediaType || "(no type)"} is not an admitted attachment type (admitted: ${allowlist}).`);
    // Checked before decoding: a huge payload is refused without allocating its bytes.
    const decodedSize = Math.floor((input.data.length * 3) / 4) - (input.data.endsWith("==") ? 2 : input.data.endsWith("=") ? 1 : 0);
    if (decodedSize > policy.maxFileBytes) throw new DomainError("payload_too_large", `${at} "${input.name}" is ${formatBytes(decodedSize)}, over the ${formatBytes(policy.maxFileBytes)} limit for one attachment.`);
    if (!BASE64.test(input.data)) throw new DomainError("validation_failed", `${at} "${input.name}": data must be the file's bytes in standard base64 (A–Z, a–z, 0–9, +, /, = padding).`);
    const bytes = new Uint8Array(Buffer.from(input.data, "base64"));
    const mismatch = contentMismatch(mediaType, bytes);
    if (mismatch) throw new DomainError("validation_failed", `${at} "${input.name}" is declared ${mediaType}, but ${mismatch}.`);
    total += bytes.byteLength;
    checked.push({ kind: "new", name: input.name, mediaType, bytes, sha256: sha256Of(bytes) });
  }
  if (total > policy.maxRunBytes) throw new DomainError("payload_too_large", `The attachments total ${formatBytes(total)}, over the ${formatBytes(policy.maxRunBytes)} limit for one run.`);
  return checked;
}

/**
 * Stores the checked attachments' bytes (inside the run's creating transaction) and returns their
 * facts. Media given again by id counts as used now, so retention cannot take it meanwhile; one
 * that retention took since the check is refused like any media the caller does not hold.
 */
export async function admitAttachments(tx: Db, ownerId: string, checked: readonly TCheckedAttachment[]): Promise<TAttachmentFact[]> {
  const again = checked.flatMap((a) => (a.kind === "stored" ? [a.fact.id] : []));
  const held = new Set(await touchMedia(tx, ownerId, again));
  const gone = again.find((id) => !held.has(id));
  if (gone) throw new DomainError("validation_failed", `No media ${gone} is stored for you; attach the file's data instead.`);
  const facts: TAttachmentFact[] = [];
  for (const a of checked) {
    if (a.kind === "stored") {
      facts.push(a.fact);
      continue;
    }
    const stored = await storeMedia(tx, { ownerId, mediaType: a.mediaType, bytes: a.bytes, sha256: a.sha256 });
    facts.push({ id: stored.id, name: a.name, mediaType: a.mediaType, size: stored.size, sha256: stored.sha256 });
  }
  return facts;
}
