// Zero-width, bidi control and other invisible characters made visible, so nothing can hide in
// proposed text. Beyond the zero-width and bidi controls this covers Unicode tag characters
// (U+E0000–E007F, "ASCII smuggling": invisible copies of ASCII text), Hangul fillers and the
// combining grapheme joiner (blank), and variation selectors (runs of them encode hidden bytes).
// One emoji variation selector (U+FE0E/U+FE0F) right after a visible character is ordinary
// emoji presentation and stays as it is.
const CLASS = '\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F'
  + '\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0'
  + '\\uFFF9-\\uFFFB\\u{1D173}-\\u{1D17A}\\u{E0000}-\\u{E007F}\\u{E0100}-\\u{E01EF}';
// Every character of CLASS except an emoji selector that follows a visible character.
const HIDDEN = new RegExp(`(?![\\uFE0E\\uFE0F])[${CLASS}]|(?<=^|[\\s${CLASS}])[\\uFE0E\\uFE0F]`, 'gu');

/** `text` with each invisible or direction-changing character shown as ⟦U+XXXX⟧. */
export function visible(text) {
  return String(text || '').replace(HIDDEN, (ch) =>
    `⟦U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟧`);
}

/** How many such characters `text` holds. */
export function hiddenCount(text) {
  return (String(text || '').match(HIDDEN) || []).length;
}
