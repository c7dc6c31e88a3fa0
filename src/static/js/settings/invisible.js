// Zero-width and bidi control characters made visible, so nothing can hide in proposed text.
const HIDDEN = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** `text` with each invisible or direction-changing character shown as ⟦U+XXXX⟧. */
export function visible(text) {
  return String(text || '').replace(HIDDEN, (ch) =>
    `⟦U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟧`);
}

/** How many such characters `text` holds. */
export function hiddenCount(text) {
  return (String(text || '').match(HIDDEN) || []).length;
}
