// The merge view: a newer revision of a file arrived while the person had a draft (a memory
// update, another tab, a restore, or a 412 on save). The draft's base never moves silently;
// instead base, saved version and draft are merged three ways. Changes to different lines merge
// on their own and are highlighted; overlapping ones are chosen hunk by hunk ("Keep both" first).
// Removed lines are shown struck through, so nothing leaves without the person seeing it.
import { byId, h } from '../lib/dom.js';
import { conflictCount, merge3, mergedText } from '../lib/merge3.js';

const CHOICES = [['both', 'Keep both'], ['saved', 'Only the saved version'], ['mine', 'Only my draft']];

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
    byId('conflict-info').textContent = `Your draft started from revision ${base.revision}; `
      + `revision ${saved.revision} was saved in the meantime (by a memory update, another tab or a `
      + 'restore). Changes to different lines are merged below and highlighted. '
      + (conflicts ? `${conflicts === 1 ? 'One part was' : `${conflicts} parts were`} changed on both `
        + 'sides: choose for each what to keep (both, by default). ' : '')
      + `Saving stores the merged text as a new revision after ${saved.revision}.`;
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
    const who = { saved: 'From the saved version', mine: 'From your draft', both: 'In both' }[chunk.kind];
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
      }), label));
    return h('fieldset', { class: 'merge-conflict', dataset: { index, choice: 'both' } },
      h('legend', { text: `Changed on both sides (${index + 1} of ${conflictCount(this.chunks)})` }),
      chunk.base.length ? h('div', { class: 'merge-side' },
        h('span', { class: 'merge-tag', text: 'Before' }), lineEls(chunk.base, 'merge-del')) : null,
      h('div', { class: 'merge-side merge-side-saved' },
        h('span', { class: 'merge-tag', text: 'Saved version' }), lineEls(chunk.saved, 'merge-add')),
      h('div', { class: 'merge-side merge-side-mine' },
        h('span', { class: 'merge-tag', text: 'Your draft' }), lineEls(chunk.mine, 'merge-add')),
      h('div', { class: 'merge-choices', role: 'radiogroup', 'aria-label': 'Keep' }, radios));
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
