// A unified diff rendered line by line as text nodes with colour classes (never as markup).
import { h } from './dom.js';

function lineClass(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-line diff-file';
  if (line.startsWith('@@')) return 'diff-line diff-hunk';
  if (line.startsWith('+')) return 'diff-line diff-add';
  if (line.startsWith('-')) return 'diff-line diff-del';
  return 'diff-line';
}

/** Fills `target` (a <pre>) with the lines of `diffText`; counts what was added and removed. */
export function renderDiff(target, diffText) {
  const lines = String(diffText || '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (!lines.length) {
    target.replaceChildren(h('span', { class: 'diff-empty', text: 'No changes to the revision before.' }));
    return { added: 0, removed: 0 };
  }
  let added = 0;
  let removed = 0;
  target.replaceChildren(...lines.map((line) => {
    const cls = lineClass(line);
    if (cls.endsWith('diff-add')) added += 1;
    if (cls.endsWith('diff-del')) removed += 1;
    return h('span', { class: cls, text: line || ' ' });
  }));
  return { added, removed };
}
