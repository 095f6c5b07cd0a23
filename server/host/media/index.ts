import type { Db } from "../../../db/client";
import { mediaBytesOf } from "../../../db/repositories/media";
import { DomainError } from "../../core/errors";
import type { TAttachmentFact, TMediaPolicy } from "../../core/media";
import type { THostMediaCapabilities, TInputMedia, TPreparedMedia } from "../../../plugin-sdk/media";
import { buildContextMedia } from "./context-media";
import { prepareReplyMedia } from "./reply-media";
import { readStagedAttachment, stageInputAttachments } from "./staging";
import { localWorkspaceReader } from "./workspace-files";

/** Builds the media capabilities of an attempt; every call after the attempt settles fails closed. */
export function createMediaCapabilities(input: {
  db: Db;
  policy: TMediaPolicy;
  ownerId: string;
  workspaceDir: string;
  attachments: readonly TAttachmentFact[];
  runAs: { uid: number; gid: number } | null;
  isCurrent: () => boolean;
  signal: AbortSignal;
  publish: <T>(write: (tx: Db) => Promise<T>) => Promise<T>;
  /** Told what each `prepareReplyMedia` call stored and refused (a native result may deliver only that). */
  onPrepared?: (media: TPreparedMedia) => void;
}): THostMediaCapabilities {
  const assertCurrent = () => {
    if (!input.isCurrent()) throw new DomainError("conflict", "This attempt has settled; its media capabilities are closed.");
  };
  let staged: Promise<ReadonlyMap<string, string>> | null = null;
  const resolve = async (): Promise<readonly TInputMedia[]> => {
    assertCurrent();
    if (input.attachments.length === 0) return Object.freeze([]);
    const bytes = await mediaBytesOf(input.db, input.ownerId, input.attachments.map((a) => a.id));
    // Authority is checked again after the awaited read: a run settled meanwhile gets nothing.
    assertCurrent();
    return Object.freeze(
      input.attachments.flatMap((a) => {
        const data = bytes.get(a.id);
        return data ? [Object.freeze({ ...a, bytes: new Uint8Array(data) })] : [];
      }),
    );
  };
  const stage = () => {
    staged ??= resolve().then((media) => stageInputAttachments(input.workspaceDir, media, input.runAs));
    return staged;
  };
  return {
    resolveInputAttachmentMedia: resolve,
    prepareContextMedia: async ({ maxChars }) => {
      if (input.attachments.length === 0) return null;
      const media = await resolve();
      const paths = await stage().catch(() => new Map<string, string>());
      assertCurrent();
      return buildContextMedia(media, paths, Math.min(maxChars ?? input.policy.contextChars, input.policy.contextChars));
    },
    prepareReplyMedia: (request) =>
      prepareReplyMedia(
        {
          ownerId: input.ownerId,
          workspaceDir: input.workspaceDir,
          localReader: localWorkspaceReader(input.workspaceDir),
          maxFileBytes: input.policy.maxFileBytes,
          maxTotalBytes: input.policy.maxRunBytes,
          isCurrent: input.isCurrent,
          signal: input.signal,
          publish: input.publish,
        },
        request,
      ).then((result) => {
        input.onPrepared?.(result.kind === "attempt" ? result.preparedMedia : result.payload.media);
        return result;
      }),
    stageInputAttachments: stage,
    readStagedAttachment: (relativePath, options) =>
      readStagedAttachment(input.workspaceDir, relativePath, { maxBytes: options.maxBytes, signal: options.signal ?? input.signal, isCurrent: input.isCurrent }),
  };
}
