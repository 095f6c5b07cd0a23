import type { ServerResponse } from "node:http";
import { IMAGE_TYPES } from "../../core/media";

/** `Content-Disposition` with an ASCII fallback and the exact UTF-8 name (RFC 6266 / 5987). */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * Sends a stored file: its own media type, never sniffed; only raster images are shown inline,
 * everything else (SVG, HTML, scripts, documents) is a download, and the sandboxing CSP keeps a
 * document opened anyway from running or reaching anything.
 */
export function sendFile(res: ServerResponse, file: { name: string; mediaType: string; bytes: Uint8Array }): void {
  const inline = IMAGE_TYPES.includes(file.mediaType);
  res.writeHead(200, {
    "content-type": file.mediaType,
    "content-length": String(file.bytes.byteLength),
    "content-disposition": contentDisposition(inline ? "inline" : "attachment", file.name),
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cache-control": "private, no-store",
  });
  res.end(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength));
}
