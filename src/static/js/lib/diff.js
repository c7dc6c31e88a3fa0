// A unified diff rendered for people: added and removed lines as <ins>/<del> (no raw +/-
// prefixes), the words that changed inside a replaced line marked, hunks as "Lines a–b".
// Everything goes in as text nodes, never as markup.
import { h } from './dom.js';
import { t } from './i18n.js';

const TOKEN = /\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;
const MAX_CELLS = 250_000;

/** Word-level change of `before` → `after`: `[{text, changed}]` for each side. */
export function wordDiff(before, after) {
  const a = before.match(TOKEN) || [];
  const b = after.match(TOKEN) || [];
  if (a.length * b.length > MAX_CELLS) {
    return { before: [{ text: before, changed: true }], after: [{ text: after, changed: true }] };
  }
  const table = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const left = [];
  const right = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      left.push({ text: a[i], changed: false }); right.push({ text: b[j], changed: false }); i += 1; j += 1;
    } else if (j < b.length && (i >= a.length || table[i][j + 1] >= table[i + 1][j])) {
      right.push({ text: b[j], changed: true }); j += 1;
    } else {
      left.push({ text: a[i], changed: true }); i += 1;
    }
  }
  return { before: left, after: right };
}

function parts(pieces) {
  return pieces.map((piece) => (piece.changed && piece.text.trim()
    ? h('mark', { class: 'diff-word', text: piece.text }) : piece.text));
}

function lineEl(kind, text, pieces = null) {
  const tag = kind === 'add' ? 'ins' : kind === 'del' ? 'del' : 'span';
  const content = pieces ? parts(pieces) : [text || ' '];
  return h(tag, { class: `diff-line diff-${kind}` }, content.length ? content : ' ');
}

/** Renders one run of removed lines followed by added lines, pairing them word by word. */
function changeEls(removed, added) {
  const paired = Math.min(removed.length, added.length);
  const words = removed.slice(0, paired).map((line, k) => wordDiff(line, added[k]));
  const dels = removed.map((line, k) => lineEl('del', line, k < paired ? words[k].before : null));
  const adds = added.map((line, k) => lineEl('add', line, k < paired ? words[k].after : null));
  return [...dels, ...adds];
}

/** Fills `target` (a <pre>) from `diffText`; counts what was added and removed. */
export function renderDiff(target, diffText) {
  const lines = String(diffText || '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const out = [];
  let removed = [];
  let added = [];
  const counts = { added: 0, removed: 0 };
  const flush = () => {
    out.push(...changeEls(removed, added));
    counts.removed += removed.length;
    counts.added += added.length;
    removed = [];
    added = [];
  };
  let inHunk = false;
  for (const line of lines) {
    if (!inHunk && !line.startsWith('@@')) continue;
    inHunk = true;
    if (line.startsWith('-')) { if (added.length) flush(); removed.push(line.slice(1)); continue; }
    if (line.startsWith('+')) { added.push(line.slice(1)); continue; }
    flush();
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      const start = Number(hunk[1]);
      const end = start + Math.max(Number(hunk[2] ?? 1), 1) - 1;
      out.push(h('span', { class: 'diff-line diff-hunk', text: start === end ? t('common.diff.line', { line: start }) : t('common.diff.lines', { start, end }) }));
    } else if (!line.startsWith('\\')) {
      out.push(lineEl('same', line.startsWith(' ') ? line.slice(1) : line));
    }
  }
  flush();
  if (!out.length) {
    target.replaceChildren(h('span', { class: 'diff-empty', text: t('common.diff.no_changes') }));
    return counts;
  }
  target.replaceChildren(...out);
  return counts;
}
