import type { Page } from "@playwright/test";

/**
 * Every visible text on the page (buttons, links, badges, cells, form values) whose contrast
 * against what is painted behind it is below WCAG AA: 4.5:1, or 3:1 for large text (24 px, or
 * 18.66 px bold). The colours are the browser's computed ones; translucent backgrounds are
 * composited up the ancestor chain. Disabled controls are exempt (WCAG 1.4.3), as are texts
 * hidden for screen readers only. A colour the check cannot read is reported, never skipped.
 */
export async function lowContrastTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type TRgba = [number, number, number, number];
    const parse = (value: string): TRgba | null => {
      const rgb = value.match(/^rgba?\(([^)]+)\)$/);
      if (rgb?.[1]) {
        const [r = 0, g = 0, b = 0, a = 1] = rgb[1].split(/[\s,/]+/).filter(Boolean).map(Number);
        return [r / 255, g / 255, b / 255, a];
      }
      const srgb = value.match(/^color\(srgb ([^)]+)\)$/);
      if (srgb?.[1]) {
        const [r = 0, g = 0, b = 0, a = 1] = srgb[1].split(/[\s/]+/).filter(Boolean).map(Number);
        return [r, g, b, a];
      }
      return null;
    };
    const over = (top: TRgba, below: TRgba): TRgba => {
      const a = top[3];
      return [top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a), 1];
    };
    const luminance = ([r, g, b]: TRgba): number => {
      const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    };
    const problems = new Set<string>();
    const nameOf = (el: Element, text: string) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? `.${el.className.trim().split(/\s+/).join(".")}` : ""} "${text.slice(0, 40)}"`;
    const backgroundOf = (el: Element): TRgba | string => {
      const layers: TRgba[] = [];
      for (let node: Element | null = el; node; node = node.parentElement) {
        const style = getComputedStyle(node);
        if (style.backgroundImage !== "none") return `unreadable background image ${style.backgroundImage.slice(0, 40)}`;
        const colour = parse(style.backgroundColor);
        if (!colour) return `unreadable background ${style.backgroundColor}`;
        if (colour[3] > 0) layers.push(colour);
        if (colour[3] >= 1) break;
      }
      return layers.reduceRight<TRgba>((below, top) => over(top, below), [1, 1, 1, 1]);
    };
    for (const el of document.body.querySelectorAll("*")) {
      const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent ?? "").join("").trim();
      const text = own || (el instanceof HTMLInputElement && el.type !== "hidden" && el.type !== "checkbox" && el.type !== "radio" ? el.value : "");
      if (!text || el.closest(":disabled, [aria-disabled='true'], .visually-hidden, svg")) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width <= 1 || rect.height <= 1 || !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const style = getComputedStyle(el);
      const fg = parse(style.color);
      const bg = backgroundOf(el);
      if (!fg || typeof bg === "string") {
        problems.add(`${nameOf(el, text)}: ${typeof bg === "string" ? bg : `unreadable colour ${style.color}`}`);
        continue;
      }
      const [hi, lo] = [luminance(over(fg, bg)), luminance(bg)].sort((a, b) => b - a) as [number, number];
      const ratio = (hi + 0.05) / (lo + 0.05);
      const size = Number.parseFloat(style.fontSize);
      const need = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700) ? 3 : 4.5;
      if (ratio < need) problems.add(`${nameOf(el, text)}: ${ratio.toFixed(2)}:1, needs ${need}:1 (${style.color} on ${style.backgroundColor})`);
    }
    return [...problems];
  });
}
