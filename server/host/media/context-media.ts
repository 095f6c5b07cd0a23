import type { TContextMedia, TInputMedia } from "../../../plugin-sdk/media";
import { formatBytes, IMAGE_TYPES, isTextType, type TAttachmentFact } from "../../core/media";

const label = (m: TAttachmentFact) => `"${m.name}" (${m.mediaType}, ${formatBytes(m.size)}, sha256 ${m.sha256.slice(0, 12)}…)`;

/**
 * Builds the model context of a run's attachments within `maxChars` of text: images become image
 * parts, text documents are inlined whole while they fit the remaining budget, and everything else
 * becomes a labelled fact (where it is staged, why it is not inlined). A pure function of the
 * media, the staged paths and the budget, so a resumed run sends exactly the same context.
 */
export function buildContextMedia(media: readonly TInputMedia[], staged: ReadonlyMap<string, string>, maxChars: number): TContextMedia {
  const parts: string[] = [];
  const images: Array<{ name: string; mediaType: string; data: Uint8Array }> = [];
  let remaining = Math.max(0, maxChars);
  const where = (m: TAttachmentFact) => (staged.has(m.id) ? `; staged at ${staged.get(m.id)} in the workspace` : "");
  const fact = (line: string) => {
    parts.push(line);
    remaining = Math.max(0, remaining - line.length);
  };
  for (const m of media) {
    if (IMAGE_TYPES.includes(m.mediaType)) {
      images.push({ name: m.name, mediaType: m.mediaType, data: m.bytes });
      fact(`[Attachment ${label(m)}: image, attached below${where(m)}.]`);
      continue;
    }
    if (isTextType(m.mediaType)) {
      const text = new TextDecoder().decode(m.bytes);
      const block = `[Attachment ${label(m)}${where(m)}]\n${text}\n[End of attachment "${m.name}"]`;
      if (block.length <= remaining) {
        parts.push(block);
        remaining -= block.length;
      } else {
        fact(`[Attachment ${label(m)}: not included, its ${text.length} characters do not fit the remaining context budget of ${remaining} characters${where(m)}.]`);
      }
      continue;
    }
    fact(`[Attachment ${label(m)}: not readable as text by the model${where(m)}.]`);
  }
  return { text: parts.join("\n\n"), images, facts: media.map(({ bytes: _bytes, ...f }) => f) };
}
