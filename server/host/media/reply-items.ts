import type { TPreparedMedia } from "../../../plugin-sdk/media";
import type { TOutputItem } from "../../core/envelope";
import { DomainError } from "../../core/errors";
import type { TAttachmentFact } from "../../core/media";

/** Where prepared reply media is recorded: the items and events of the step that answers. */
export type TReplyMediaRecorder = { item: (item: TOutputItem) => void; event: (type: string, data: Record<string, unknown>) => void };

/**
 * Records prepared reply media with the answer: each stored file an `attachment` item with its
 * download URL, each refused one an `attachment_failure` notice, both in the trajectory.
 */
export function recordReplyMedia(record: TReplyMediaRecorder, responseId: string, media: TPreparedMedia): void {
  for (const a of media.attachments) {
    record.item({ type: "attachment", id: a.id, name: a.name, mediaType: a.mediaType, size: a.size, url: `/v1/responses/${responseId}/attachments/${a.id}` });
    record.event("attachment.published", { ...a });
  }
  for (const f of media.failures) {
    record.item({ type: "attachment_failure", ...f });
    record.event("attachment.failed", { ...f });
  }
}

const failureKey = (f: { path: unknown; reason: unknown; message: unknown }) => JSON.stringify([f.path, f.reason, f.message]);

/** The reply media one attempt prepared: what a harness's result may deliver. */
export type TPreparedMediaLedger = {
  add: (media: TPreparedMedia) => void;
  /** The host's own record of the media a harness returned; refuses anything this attempt did not prepare. */
  deliverable: (media: unknown) => TPreparedMedia;
};

export function createPreparedMediaLedger(): TPreparedMediaLedger {
  const attachments = new Map<string, TAttachmentFact>();
  const failures = new Map<string, TPreparedMedia["failures"][number]>();
  const refuse = (what: string) =>
    new DomainError("invalid_request", `The harness's result names reply media this attempt did not prepare (${what}): return what media.prepareReplyMedia gave this attempt.`);
  return {
    add: (media) => {
      for (const a of media.attachments) attachments.set(a.id, a);
      for (const f of media.failures) failures.set(failureKey(f), f);
    },
    deliverable: (media) => {
      const m = media as Partial<TPreparedMedia> | null;
      if (m === null || typeof m !== "object" || !Array.isArray(m.attachments ?? []) || !Array.isArray(m.failures ?? [])) throw refuse("media is not { attachments, failures }");
      const out: TPreparedMedia = { attachments: [], failures: [] };
      for (const a of m.attachments ?? []) {
        const fact = typeof a?.id === "string" ? attachments.get(a.id) : undefined;
        if (!fact) throw refuse(`attachment ${JSON.stringify(a?.id ?? null)}`);
        out.attachments.push(fact);
      }
      for (const f of m.failures ?? []) {
        const known = f && typeof f === "object" ? failures.get(failureKey(f)) : undefined;
        if (!known) throw refuse(`notice for ${JSON.stringify((f as { path?: unknown } | null)?.path ?? null)}`);
        out.failures.push(known);
      }
      return out;
    },
  };
}
