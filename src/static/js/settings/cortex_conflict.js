// The merge view: a newer revision of a file arrived while the person had a draft (a memory
// update, another tab, a restore, or a 412 on save). The draft's base never moves silently;
// instead base, saved version and draft are merged three ways. Changes to different lines merge
// on their own and are highlighted; overlapping ones are chosen hunk by hunk ("Keep both" first).
// Removed lines are shown struck through, so nothing leaves without the person seeing it.
import { byId, h } from '../lib/dom.js';
import { conflictCount, merge3, mergedText } from '../lib/merge3.js';
import { t, tn } from '../lib/i18n.js';

const CHOICES = [['both', 'settings.conflict.keep_both'], ['saved', 'settings.conflict.keep_saved'], ['mine', 'settings.conflict.keep_mine']];

function lineEls(lines, cls) {
  return lines.map((line) => h('span', { class: `merge-line ${cls}`, text: line || ' ' }));
}

/** Shows the merge and reports the outcome through `save(text)`, `edit(text)`, `discard()`. */
export class ConflictView {
  constructor({ hide, save, edit, discard }) {
    this.root = byId('conflict');
    this.view = byId('merge-view');
    this.hide = hide;
    this.chunks = null;
    this.choices = [];
    byId('conflict-save').addEventListener('click', () => this.chunks && save(this.text()));
    byId('conflict-edit').addEventListener('click', () => this.chunks && edit(this.text()));
    byId('conflict-discard').addEventListener('click', () => this.chunks && discard());
  }

  /** True while the view is open. */
  get isOpen() {
    return Boolean(this.chunks);
  }

  /** The merged text with the current choices. */
  text() {
    return mergedText(this.chunks, this.choices);
  }

  /** Opens the merge of `draft` (based on `base`) with `saved` (the newest revision). */
  open(base, saved, draft) {
    this.chunks = merge3(base.content, saved.content, draft);
    this.choices = [];
    const conflicts = conflictCount(this.chunks);
    byId('conflict-info').textContent = [
      t('settings.conflict.info', { base: base.version, saved: saved.version }),
      conflicts ? tn('settings.conflict.info_parts', conflicts) : '',
      t('settings.conflict.info_saving', { saved: saved.version }),
    ].filter(Boolean).join(' ');
    this.render();
    this.root.hidden = false;
    this.hide.forEach((el) => { el.hidden = true; });
    const heading = byId('conflict-heading');
    heading.tabIndex = -1;
    heading.focus();
  }

  render() {
    let conflict = 0;
    this.view.replaceChildren(...this.chunks.map((chunk) => {
      if (chunk.kind === 'same') return h('div', { class: 'merge-same' }, lineEls(chunk.lines, ''));
      if (chunk.kind === 'conflict') {
        conflict += 1;
        return this.conflictEl(chunk, conflict - 1);
      }
      return this.changeEl(chunk);
    }));
  }

  changeEl(chunk) {
    const who = t(`settings.conflict.from_${chunk.kind}`);
    return h('div', { class: `merge-change merge-from-${chunk.kind}`, dataset: { kind: chunk.kind } },
      h('span', { class: 'merge-tag', text: chunk.lines.length ? who : `${who}: removed` }),
      lineEls(chunk.base, 'merge-del'), lineEls(chunk.lines, 'merge-add'));
  }

  conflictEl(chunk, index) {
    const name = `merge-choice-${index}`;
    const radios = CHOICES.map(([value, label]) => h('label', { class: 'merge-choice' },
      h('input', {
        type: 'radio', name, value, checked: value === 'both',
        onChange: () => { this.choices[index] = value; this.markConflict(index); },
      }), t(label)));
    return h('fieldset', { class: 'merge-conflict', dataset: { index, choice: 'both' } },
      h('legend', { text: t('settings.conflict.hunk', { index: index + 1, total: conflictCount(this.chunks) }) }),
      chunk.base.length ? h('div', { class: 'merge-side' },
        h('span', { class: 'merge-tag', text: t('settings.conflict.before') }), lineEls(chunk.base, 'merge-del')) : null,
      h('div', { class: 'merge-side merge-side-saved' },
        h('span', { class: 'merge-tag', text: t('settings.conflict.saved_version') }), lineEls(chunk.saved, 'merge-add')),
      h('div', { class: 'merge-side merge-side-mine' },
        h('span', { class: 'merge-tag', text: t('settings.conflict.your_draft') }), lineEls(chunk.mine, 'merge-add')),
      h('div', { class: 'merge-choices', role: 'radiogroup', 'aria-label': t('settings.conflict.keep') }, radios));
  }

  markConflict(index) {
    const el = this.view.querySelector(`.merge-conflict[data-index="${index}"]`);
    if (el) el.dataset.choice = this.choices[index];
  }

  close() {
    this.chunks = null;
    this.choices = [];
    this.root.hidden = true;
    this.hide.forEach((el) => { el.hidden = false; });
  }
}
