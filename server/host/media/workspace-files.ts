import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, posix, relative, resolve, sep } from "node:path";
import type { TReadWorkspaceFile } from "../../../plugin-sdk/media";
import type { TAttachmentFailureReason } from "../../core/envelope";
import { formatBytes } from "../../core/media";

/** A workspace file that could not be read for delivery; `message` is the labelled notice people read. */
export class MediaReadError extends Error {
  constructor(
    readonly reason: TAttachmentFailureReason,
    message: string,
  ) {
    super(message);
    this.name = "MediaReadError";
  }
}


export const inside = (root: string, path: string): boolean => path === root || path.startsWith(root + sep);

const shown = (path: string): string => JSON.stringify(path);

export const outsideWorkspace = (path: string): MediaReadError => new MediaReadError("outside_workspace", `${shown(path)} is outside the workspace; only files inside it can be attached.`);
export const tooLarge = (path: string, maxBytes: number): MediaReadError =>
  new MediaReadError("too_large", `${shown(path)} is larger than the ${formatBytes(maxBytes)} limit for an attachment.`);
export const cancelled = (path: string): MediaReadError => new MediaReadError("cancelled", `Attaching ${shown(path)} was cancelled.`);

/**
 * The workspace-relative form of a requested path, checked lexically (no file system): absolute
 * paths count only under `workspaceRoot` (the workspace's own absolute path, e.g. a remote
 * workspace's), and `..` may not climb out. Null when the path is outside.
 */
export function workspaceRelative(requested: string, workspaceRoot: string | undefined): string | null {
  if (requested === "" || requested.includes("\0")) return null;
  let rel = requested.replaceAll("\\", "/");
  if (isAbsolute(rel) || rel.startsWith("/")) {
    const root = workspaceRoot?.replaceAll("\\", "/").replace(/\/+$/, "");
    if (!root || !(rel === root || rel.startsWith(`${root}/`))) return null;
    rel = rel.slice(root.length + 1);
  }
  const normal = posix.normalize(rel === "" ? "." : rel);
  if (normal === ".." || normal.startsWith("../") || normal === ".") return null;
  return normal;
}

const CHUNK = 64 * 1024;

/**
 * Reads `relativePath` in the local workspace `root`: symlinks resolved (a file whose real path
 * leaves the workspace is "outside", whether or not it exists), only regular files, never more
 * than `maxBytes` (checked before and while reading), stopping when `signal` aborts.
 */
export function localWorkspaceReader(root: string): TReadWorkspaceFile {
  return async (relativePath, { maxBytes, signal }) => {
    if (signal.aborted) throw cancelled(relativePath);
    const rootReal = await realpath(root).catch(() => {
      throw new MediaReadError("missing", "The session workspace does not exist.");
    });
    const lexical = resolve(rootReal, relativePath);
    if (!inside(rootReal, lexical)) throw outsideWorkspace(relativePath);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch {
      throw new MediaReadError("missing", `${shown(relativePath)} does not exist in the workspace.`);
    }
    if (!inside(rootReal, real)) throw outsideWorkspace(relativePath);
    // O_NONBLOCK: a FIFO planted in the workspace cannot hang the read; O_NOFOLLOW: the real path is read, not a link swapped in since.
    const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => {
      throw new MediaReadError("denied", `${shown(relativePath)} cannot be read.`);
    });
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new MediaReadError("denied", `${shown(relativePath)} is not a regular file.`);
      if (st.size > maxBytes) throw tooLarge(relativePath, maxBytes);
      const chunks: Buffer[] = [];
      let size = 0;
      for (;;) {
        if (signal.aborted) throw cancelled(relativePath);
        const buffer = Buffer.allocUnsafe(CHUNK);
        const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
        if (bytesRead === 0) break;
        size += bytesRead;
        // The file may have grown since the stat: the limit holds on what is actually read.
        if (size > maxBytes) throw tooLarge(relativePath, maxBytes);
        chunks.push(buffer.subarray(0, bytesRead));
      }
      return new Uint8Array(Buffer.concat(chunks));
    } finally {
      await handle.close();
    }
  };
}

/** A path as people see it: relative to the workspace when it is inside. */
export const displayPath = (root: string, path: string): string => (inside(root, path) ? relative(root, path) || "." : path);
