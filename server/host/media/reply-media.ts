import { posix } from "node:path";
import type { Db } from "../../../db/client";
import { storeMedia } from "../../../db/repositories/media";
import type { TAttachmentFailure, TReadWorkspaceFile, TReplyMediaRequest, TReplyMediaResult } from "../../../plugin-sdk/media";
import { mediaTypeOfName, type TAttachmentFact, ZAttachmentName } from "../../core/media";
import { cancelled, MediaReadError, outsideWorkspace, tooLarge, workspaceRelative } from "./workspace-files";

/** What the host binds a preparer to: its workspace, limits, authority, cancellation and a commit under the run's lock. */
export type TReplyMediaHost = {
  ownerId: string;
  workspaceDir: string;
  localReader: TReadWorkspaceFile;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** The attempt's own authority: capabilities open and the run live. */
  isCurrent: () => boolean;
  signal: AbortSignal;
  /** Runs `write` in a transaction that holds the still-executing run (throws when it was settled or adopted). */
  publish: <T>(write: (tx: Db) => Promise<T>) => Promise<T>;
};

class AuthorityRevoked extends Error {}

const revoked = (path: string): TAttachmentFailure => ({ path, reason: "revoked", message: `${JSON.stringify(path)} was not attached: the run's authority ended before delivery.` });

/**
 * Prepares reply attachments: reads only inside the workspace (bounded, cancellable), then stores
 * the bytes in the media store in a commit that still holds the run, re-checking both the host's
 * and the harness's authority there. Failures are notices; nothing falls back to another file.
 */
export async function prepareReplyMedia(host: TReplyMediaHost, request: TReplyMediaRequest): Promise<TReplyMediaResult> {
  const signal = request.signal ? AbortSignal.any([host.signal, request.signal]) : host.signal;
  const current = () => {
    if (!host.isCurrent()) return false;
    try {
      return request.assertCurrent ? request.assertCurrent() === true : true;
    } catch {
      return false;
    }
  };
  const read: Array<{ path: string; name: string; bytes: Uint8Array }> = [];
  const failures: TAttachmentFailure[] = [];
  if (request.kind === "artifact") {
    const name = ZAttachmentName.safeParse(request.fileName).success ? request.fileName : "artifact";
    if (request.buffer.byteLength > host.maxFileBytes) failures.push(failure(tooLarge(name, host.maxFileBytes), name));
    else read.push({ path: name, name, bytes: new Uint8Array(request.buffer) });
  } else {
    const paths = request.kind === "attempt" ? request.attempt.paths : request.payload.paths;
    const reader = request.readWorkspaceFile ?? host.localReader;
    let budget = host.maxTotalBytes;
    for (const path of paths) {
      if (signal.aborted) {
        failures.push(failure(cancelled(path), path));
        continue;
      }
      if (!current()) {
        failures.push(revoked(path));
        continue;
      }
      const rel = workspaceRelative(path, request.workspaceRoot ?? host.workspaceDir);
      if (rel === null) {
        failures.push(failure(outsideWorkspace(path), path));
        continue;
      }
      const maxBytes = Math.min(host.maxFileBytes, budget);
      try {
        const bytes = await reader(rel, { maxBytes, signal });
        // A harness's reader must enforce the limit; the host holds it either way.
        if (bytes.byteLength > maxBytes) throw tooLarge(path, maxBytes);
        if (signal.aborted) throw cancelled(path);
        budget -= bytes.byteLength;
        read.push({ path, name: posix.basename(rel), bytes });
      } catch (error) {
        failures.push(failure(error, path, signal.aborted));
      }
    }
  }
  let attachments: TAttachmentFact[] = [];
  if (read.length > 0) {
    if (signal.aborted) failures.push(...read.map((r) => failure(cancelled(r.path), r.path)));
    else if (!current()) failures.push(...read.map((r) => revoked(r.path)));
    else {
      try {
        attachments = await host.publish(async (tx) => {
          // The last check before the write, inside the transaction that holds the run.
          if (!current() || signal.aborted) throw new AuthorityRevoked();
          const stored: TAttachmentFact[] = [];
          for (const r of read) {
            const mediaType = request.kind === "artifact" && request.mediaType ? request.mediaType : mediaTypeOfName(r.name);
            const row = await storeMedia(tx, { ownerId: host.ownerId, mediaType, bytes: r.bytes });
            stored.push({ id: row.id, name: r.name, mediaType, size: row.size, sha256: row.sha256 });
          }
          return stored;
        });
      } catch (error) {
        if (!(error instanceof AuthorityRevoked)) throw error;
        failures.push(...read.map((r) => (signal.aborted ? failure(cancelled(r.path), r.path) : revoked(r.path))));
      }
    }
  }
  const media = { attachments, failures };
  if (request.kind === "attempt") return { kind: "attempt", preparedMedia: media };
  return { kind: request.kind, payload: { ...(request.kind === "payload" && request.payload.text !== undefined ? { text: request.payload.text } : {}), media } };
}

function failure(error: unknown, path: string, aborted = false): TAttachmentFailure {
  if (error instanceof MediaReadError) return { path, reason: error.reason, message: error.message };
  if (aborted || (error instanceof Error && error.name === "AbortError")) return { path, reason: "cancelled", message: cancelled(path).message };
  return { path, reason: "denied", message: `${JSON.stringify(path)} could not be read.` };
}
