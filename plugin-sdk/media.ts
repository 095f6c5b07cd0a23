/**
 * The media capabilities of an attempt (`hostCapabilities.media`): the run's input attachments as
 * bytes, as model context and staged in the workspace, and reply files prepared for delivery.
 * server/host/media builds them.
 */
import type { TAttachmentFact, TAttachmentFailureReason } from "./wire";

/** An admitted input attachment with its bytes: a detached copy (changing it changes nothing stored). */
export type TInputMedia = Readonly<TAttachmentFact & { bytes: Uint8Array }>;

/** What a model turn receives for a run's attachments: bounded text, image parts, and the facts behind them. */
export type TContextMedia = {
  /** Text documents (whole, while they fit) and a labelled line for each attachment that is not inlined. */
  text: string;
  images: ReadonlyArray<{ name: string; mediaType: string; data: Uint8Array }>;
  facts: readonly TAttachmentFact[];
};

/** Reads one workspace file, bounded and cancellable: what a harness with a remote workspace supplies. */
export type TReadWorkspaceFile = (relativePath: string, options: { maxBytes: number; signal: AbortSignal }) => Promise<Uint8Array>;

/** A reply file that was not delivered: the labelled notice, never a fallback file. */
export type TAttachmentFailure = { path: string; reason: TAttachmentFailureReason; message: string };

/** Prepared reply media: stored attachments and the failures, never a live reader or a server path. */
export type TPreparedMedia = { attachments: TAttachmentFact[]; failures: TAttachmentFailure[] };

type TWorkspaceRead = {
  /** The harness's own reader (a remote workspace); the host's local reader of the attempt's workspace otherwise. */
  readWorkspaceFile?: TReadWorkspaceFile;
  /** The remote workspace's absolute path, when it differs from the host's: absolute paths under it map into the workspace. */
  workspaceRoot?: string;
  /** The harness's own authority (native session, transport), checked with the host's through the final write. */
  assertCurrent?: () => boolean;
  signal?: AbortSignal;
};

/** What a harness asks `prepareReplyMedia` for. */
export type TReplyMediaRequest =
  | ({ kind: "attempt"; attempt: { paths: readonly string[] } } & TWorkspaceRead)
  | ({ kind: "payload"; payload: { text?: string; paths: readonly string[] } } & TWorkspaceRead)
  | { kind: "artifact"; buffer: Uint8Array; fileName: string; mediaType?: string; assertCurrent: () => boolean; signal?: AbortSignal };

export type TReplyMediaResult = { kind: "attempt"; preparedMedia: TPreparedMedia } | { kind: "payload" | "artifact"; payload: { text?: string; media: TPreparedMedia } };

/** The media capabilities of one attempt: closure-bound to its run, owner, workspace and authority. */
export type THostMediaCapabilities = {
  /** Frozen, detached copies of the run's admitted input attachments (facts and bytes). */
  resolveInputAttachmentMedia: () => Promise<readonly TInputMedia[]>;
  /** The run's attachments as model context (images, bounded text, labelled facts), the same on every resume. */
  prepareContextMedia: (options: { maxChars?: number }) => Promise<TContextMedia | null>;
  /** Reads reply files inside the workspace (or takes an artifact's bytes) and stores them for delivery. */
  prepareReplyMedia: (request: TReplyMediaRequest) => Promise<TReplyMediaResult>;
  /** Stages the run's attachments under `attachments/` in the workspace; returns media id → relative path. */
  stageInputAttachments: () => Promise<ReadonlyMap<string, string>>;
  /** Reads back a file the host staged (marker checked, bounded, authority kept across the reads). */
  readStagedAttachment: (relativePath: string, options: { maxBytes: number; signal?: AbortSignal }) => Promise<Uint8Array>;
};
