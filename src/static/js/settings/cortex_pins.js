// Pins in the editor: toggle <!-- pin --> … <!-- /pin --> around the selected lines or the
// section of the heading the cursor is in, and warn about markers broken by hand (such text is
// not pinned). The rules match src/utils/cortex/pins.py.
import { enhanceCode } from '../lib/code_blocks.js';
import { byId, h } from '../lib/dom.js';
import { markdownFragment } from '../lib/markdown.js';
import { t } from '../lib/i18n.js';

const OPEN = '<!-- pin -->';
const CLOSE = '<!-- /pin -->';
const MARKER = /<!--\s*(\/?)\s*pin\s*-->/gi;

/** Well-formed pinned blocks `{start, end}` (line indexes, inclusive) and warnings. */
export function parsePins(text) {
  const lines = text.split('\n');
  const blocks = [];
  const warnings = [];
  let open = null;
  lines.forEach((line, index) => {
    for (const match of line.matchAll(MARKER)) {
      const closing = Boolean(match[1]);
      if (match[0] !== (closing ? CLOSE : OPEN)) {
        warnings.push(t('settings.pins.misspelt', { line: index + 1, found: match[0], expected: closing ? CLOSE : OPEN }));
      } else if (!closing) {
        if (open !== null) warnings.push(t('settings.pins.unclosed_before_next', { line: open + 1 }));
        open = index;
      } else if (open === null) {
        warnings.push(t('settings.pins.close_without_open', { line: index + 1, close: CLOSE, open: OPEN }));
      } else {
        blocks.push({ start: open, end: index });
        open = null;
      }
    }
  });
  if (open !== null) warnings.push(t('settings.pins.unclosed', { line: open + 1 }));
  return { blocks, warnings };
}

/** Renders `text` into `target` as sanitised Markdown with each pinned block in a marked box and
 * its markers left out. The pieces are parsed apart and assembled as DOM, so the markers never
 * reach marked or any HTML parser as markup (a broken marker pins nothing and stays visible). */
export function renderPinnedPreview(target, text) {
  const lines = text.split('\n');
  const parts = [];
  let next = 0;
  for (const { start, end } of parsePins(text).blocks) {
    if (start < next) continue;
    if (start > next) parts.push(markdownFragment(lines.slice(next, start).join('\n')));
    const inner = lines.slice(start, end + 1);
    inner[0] = inner[0].replace(OPEN, '');
    const last = inner.length - 1;
    const at = inner[last].lastIndexOf(CLOSE);
    inner[last] = inner[last].slice(0, at) + inner[last].slice(at + CLOSE.length);
    parts.push(h('div', { class: 'pinned-block' },
      h('p', { class: 'pinned-label', text: t('settings.pins.pinned') }),
      markdownFragment(inner.join('\n'))));
    next = end + 1;
  }
  if (next < lines.length) parts.push(markdownFragment(lines.slice(next).join('\n')));
  target.replaceChildren(...parts);
  enhanceCode(target);
}

export class CortexPins {
  constructor() {
    this.text = byId('cortex-text');
    this.warnings = byId('pin-warnings');
    byId('pin-toggle').addEventListener('click', () => this.toggle());
    this.text.addEventListener('input', () => this.check());
  }

  check() {
    const { warnings } = parsePins(this.text.value);
    this.warnings.hidden = !warnings.length;
    this.warnings.textContent = warnings.length ? t('settings.pins.broken', { warnings: warnings.join(' ') }) : '';
  }

  toggle() {
    const value = this.text.value;
    const lines = value.split('\n');
    const first = lineAt(value, this.text.selectionStart);
    const last = lineAt(value, Math.max(this.text.selectionStart, this.text.selectionEnd - 1));
    const block = parsePins(value).blocks.find((b) => b.start <= first && last <= b.end);
    if (block) {
      lines.splice(block.end, 1);
      lines.splice(block.start, 1);
    } else {
      const [start, end] = this.text.selectionEnd > this.text.selectionStart ? [first, last] : section(lines, first);
      lines.splice(end + 1, 0, CLOSE);
      lines.splice(start, 0, OPEN);
    }
    this.text.value = lines.join('\n');
    this.text.dispatchEvent(new Event('input', { bubbles: true }));
  }
}

function lineAt(text, offset) {
  return text.slice(0, offset).split('\n').length - 1;
}

/** The lines of the section whose heading is at or above `line` (up to the next heading of the
 *  same or a higher level, without trailing blank lines); a line with no heading above: itself. */
function section(lines, line) {
  let start = line;
  while (start >= 0 && !/^#{1,6}\s/.test(lines[start])) start -= 1;
  if (start < 0) return [line, line];
  const level = lines[start].match(/^#+/)[0].length;
  let end = start + 1;
  while (end < lines.length && !(/^#{1,6}\s/.test(lines[end]) && lines[end].match(/^#+/)[0].length <= level)) end += 1;
  end -= 1;
  while (end > start && lines[end].trim() === '') end -= 1;
  return [start, end];
}
