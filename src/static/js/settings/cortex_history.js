// A cortex file's history: revisions with author, time and summary; the diff of one revision to
// the one before it; and restoring it (a new revision, so nothing is ever lost).
import { api, request, seg } from '../lib/api.js';
import { byId, formatDateTime, formatRelative, h } from '../lib/dom.js';
import { renderDiff } from '../lib/diff.js';
import { confirmAction, toast } from '../lib/ui.js';

const AUTHORS = { ai: 'Persona', user: 'You', template: 'Template', restore: 'Restore', external: 'On disk' };

/** The history card next to the editor; `onRestored(response)` hands the restored file back. */
export class CortexHistory {
  constructor({ onRestored, isDirty }) {
    this.onRestored = onRestored;
    this.isDirty = isDirty;
    this.list = byId('history-list');
    this.view = byId('diff-view');
    this.restoreButton = byId('restore');
    this.personaId = null;
    this.filename = null;
    this.revisions = [];
    this.selected = null;
    this.restoreButton.addEventListener('click', () => this.restore());
  }

  base() {
    return `/api/personas/${seg(this.personaId)}/cortex/${seg(this.filename)}/history`;
  }

  /** Lists the revisions of `filename`; `select` picks one ("latest" or a rev) to show. */
  async load(personaId, filename, select = null) {
    this.personaId = personaId;
    this.filename = filename;
    byId('history-heading').textContent = `History of ${filename}`;
    const data = await api.get(this.base());
    if (this.personaId !== personaId || this.filename !== filename) return;
    this.revisions = Array.isArray(data.revisions) ? data.revisions : [];
    const keep = this.revisions.some((r) => r.rev === this.selected) ? this.selected : null;
    const wanted = select === 'latest' ? this.revisions[0]?.rev : (select ?? keep);
    this.selected = null;
    this.render();
    if (wanted != null) await this.show(wanted);
    else this.view.hidden = true;
  }

  render() {
    const latest = this.revisions[0]?.rev;
    this.list.replaceChildren(...this.revisions.map((revision) => {
      const author = AUTHORS[revision.author] || revision.author;
      const button = h('button', {
        type: 'button', class: 'history-item', dataset: { rev: revision.rev },
        'aria-current': revision.rev === this.selected ? 'true' : null,
        onClick: () => this.show(revision.rev),
      },
      h('span', { class: 'history-head' },
        h('span', { class: 'history-rev', text: `#${revision.rev}` }),
        h('span', { class: `badge author author-${revision.author}`, text: author }),
        revision.rev === latest ? h('span', { class: 'badge', text: 'Current' }) : null),
      h('time', { class: 'history-when', datetime: revision.created_at, title: formatDateTime(revision.created_at),
        text: formatRelative(revision.created_at) }),
      h('span', { class: 'history-summary', text: revision.summary || describe(revision) }));
      return h('li', {}, button);
    }));
  }

  async show(rev) {
    let detail;
    try {
      detail = await api.get(`${this.base()}/${seg(rev)}`);
    } catch (err) {
      toast(err.message, { error: true });
      return;
    }
    this.selected = rev;
    this.list.querySelectorAll('.history-item').forEach((item) => {
      item.setAttribute('aria-current', String(Number(item.dataset.rev) === rev));
    });
    const author = AUTHORS[detail.author] || detail.author;
    const previous = detail.previous_rev ? ` against #${detail.previous_rev}` : ' (first version)';
    byId('diff-title').textContent = `Revision #${detail.rev}${previous}`;
    const counts = renderDiff(byId('diff'), detail.diff);
    byId('diff-meta').textContent = `${author} · ${formatDateTime(detail.created_at)} · `
      + `+${counts.added} −${counts.removed} lines${detail.summary ? ` · ${detail.summary}` : ''}`;
    const current = this.revisions[0] && this.revisions[0].rev === rev;
    this.restoreButton.hidden = current;
    byId('diff-current').hidden = !current;
    this.restoreButton.textContent = `Restore #${rev}`;
    this.view.hidden = false;
  }

  async restore() {
    const rev = this.selected;
    if (rev == null) return;
    const unsaved = this.isDirty(this.filename) ? ' Your draft in the editor is kept: you merge it with '
      + 'the restored text next.' : '';
    const ok = await confirmAction(`${this.filename} gets the text of revision #${rev} back, as a new `
      + `revision; the current text stays in the history.${unsaved}`,
    { title: `Restore revision #${rev}?`, confirm: 'Restore' });
    if (!ok) return;
    try {
      const response = await request('POST', `${this.base()}/${seg(rev)}/restore`, { body: {} });
      this.onRestored(response);
      toast(`Revision #${rev} restored`);
      await this.load(this.personaId, this.filename, 'latest');
    } catch (err) {
      toast(err.message, { error: true });
    }
  }
}

function describe(revision) {
  const what = { ai: 'Updated by the persona', user: 'Edited by you', template: 'Created from the template',
    restore: 'Restored an earlier version', external: 'Changed on disk' };
  return what[revision.author] || 'Changed';
}
