import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, readFile, rename } from "node:fs/promises";
import { extname, join } from "node:path";
import { sha256Of } from "../../../db/repositories/media";
import type { TAttachmentFact } from "../../core/media";
import { localWorkspaceReader, MediaReadError } from "./workspace-files";

/** The folder of the session workspace where input attachments are staged for tools. */
export const STAGING_DIR = "attachments";
/** The ownership marker: which files of STAGING_DIR the host staged, from which media. */
export const STAGING_MARKER = ".countersign-staged.json";

type TMarker = { owner: "countersign"; files: Record<string, { mediaId: string; sha256: string; size: number }> };

const safeName = (name: string): string => {
  const cleaned = name.replace(/[^\p{L}\p{N} ._()+-]/gu, "_").replace(/^\.+/, "_").slice(0, 120);
  return cleaned === "" || cleaned === STAGING_MARKER ? "attachment" : cleaned;
};

async function readMarker(dir: string): Promise<TMarker> {
  try {
    const parsed = JSON.parse(await readFile(join(dir, STAGING_MARKER), "utf8")) as TMarker;
    if (parsed?.owner === "countersign" && parsed.files && typeof parsed.files === "object") return parsed;
  } catch {
    // No marker yet (or a broken one): nothing here is the host's.
  }
  return { owner: "countersign", files: {} };
}

/** Writes a new file without following a link planted at its path (O_EXCL fails on any existing name). */
async function writeExclusive(path: string, bytes: Uint8Array, runAs: { uid: number; gid: number } | null): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(bytes);
    if (runAs) await handle.chown(runAs.uid, runAs.gid);
  } finally {
    await handle.close();
  }
}

/**
 * Stages a run's input attachments as files under `attachments/` in the session workspace, for
 * approved commands to read; returns each media id's workspace-relative path. Idempotent: a file
 * the marker says holds the same bytes is kept, another name is chosen for anything else. The
 * files belong to the user commands run as, so a sandboxed `exec` can read them.
 */
export async function stageInputAttachments(
  workspaceDir: string,
  media: ReadonlyArray<TAttachmentFact & { bytes: Uint8Array }>,
  runAs: { uid: number; gid: number } | null,
): Promise<Map<string, string>> {
  const staged = new Map<string, string>();
  if (media.length === 0) return staged;
  const path = join(workspaceDir, STAGING_DIR);
  await mkdir(path, { recursive: true, mode: 0o700 });
  const notStaged = () => new MediaReadError("denied", `The workspace's ${STAGING_DIR}/ is not a directory; attachments were not staged.`);
  // A command may have replaced the folder with a link out of the workspace: stage nothing then.
  // The folder is opened once (never through a link) and every later step goes through that open
  // folder, so a command that swaps the name for a link while we stage cannot redirect a write.
  const folder = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => {
    throw notStaged();
  });
  try {
    const st = await folder.stat();
    if (!st.isDirectory()) throw notStaged();
    if (runAs && st.uid !== runAs.uid) await folder.chown(runAs.uid, runAs.gid);
    // On Linux /proc/self/fd/N is the open folder itself, whatever its name points to now.
    const dir = existsSync(`/proc/self/fd/${folder.fd}`) ? `/proc/self/fd/${folder.fd}` : path;
    return await stageInto(dir, media, runAs);
  } finally {
    await folder.close();
  }
}

async function stageInto(dir: string, media: ReadonlyArray<TAttachmentFact & { bytes: Uint8Array }>, runAs: { uid: number; gid: number } | null): Promise<Map<string, string>> {
  const staged = new Map<string, string>();
  const marker = await readMarker(dir);
  for (const m of media) {
    const base = safeName(m.name);
    const ext = extname(base);
    const stem = base.slice(0, base.length - ext.length);
    for (let n = 1; n < 1000; n++) {
      const file = n === 1 ? base : `${stem}-${n}${ext}`;
      const known = marker.files[file];
      const present = await lstat(join(dir, file)).then(
        () => true,
        () => false,
      );
      if (known?.sha256 === m.sha256 && present) {
        staged.set(m.id, `${STAGING_DIR}/${file}`);
        break;
      }
      // A name the host staged other bytes under stays theirs while the file is there.
      if (known && present) continue;
      try {
        await writeExclusive(join(dir, file), m.bytes, runAs);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
        throw error;
      }
      marker.files[file] = { mediaId: m.id, sha256: m.sha256, size: m.size };
      staged.set(m.id, `${STAGING_DIR}/${file}`);
      break;
    }
  }
  const temp = join(dir, `.staged-${process.pid}-${Date.now()}.tmp`);
  await writeExclusive(temp, Buffer.from(JSON.stringify(marker)), null);
  // rename replaces whatever is at the marker's name (even a link) without following it.
  await rename(temp, join(dir, STAGING_MARKER));
  return staged;
}

/**
 * Reads a staged attachment back: only a file the marker says the host staged, inside this
 * workspace, at most `maxBytes`, still holding the staged bytes; the run's authority is checked
 * before and after the awaited reads.
 */
export async function readStagedAttachment(
  workspaceDir: string,
  relativePath: string,
  options: { maxBytes: number; signal: AbortSignal; isCurrent: () => boolean },
): Promise<Uint8Array> {
  const revokedError = () => new MediaReadError("revoked", "The run's authority ended; the staged file was not read.");
  if (!options.isCurrent()) throw revokedError();
  const prefix = `${STAGING_DIR}/`;
  const file = relativePath.startsWith(prefix) ? relativePath.slice(prefix.length) : null;
  const marker = await readMarker(join(workspaceDir, STAGING_DIR));
  const entry = file && !file.includes("/") ? marker.files[file] : undefined;
  if (!entry) throw new MediaReadError("denied", `${JSON.stringify(relativePath)} is not a staged attachment.`);
  const bytes = await localWorkspaceReader(workspaceDir)(relativePath, { maxBytes: options.maxBytes, signal: options.signal });
  if (!options.isCurrent()) throw revokedError();
  if (sha256Of(bytes) !== entry.sha256) throw new MediaReadError("denied", `${JSON.stringify(relativePath)} no longer holds the staged attachment.`);
  return bytes;
}
