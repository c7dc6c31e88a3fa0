// A cortex file's history: revisions with author, time and summary; the diff of one revision to
// the one before it; and restoring it (a new revision, so nothing is ever lost).
import { api, request, seg } from '../lib/api.js';
import { byId, formatDateTime, formatRelative, h } from '../lib/dom.js';
import { renderDiff } from '../lib/diff.js';
import { confirmAction, toast } from '../lib/ui.js';
import { t } from '../lib/i18n.js';

const AUTHORS = ['ai', 'user', 'template', 'restore', 'external'];
/** The badge for who made a revision (the raw value for an unknown author). */
const authorOf = (author) => (AUTHORS.includes(author) ? t(`settings.history.author.${author}`) : author);

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
    this.revealNext = false;
    this.restoreButton.addEventListener('click', () => this.restore());
  }

  /** The next diff shown is scrolled into view and focused (a "see changes" link landed here). */
  revealDiff() {
    this.revealNext = true;
  }

  /** The file's own version number of `rev` (1 for its first revision). */
  version(rev) {
    const index = this.revisions.findIndex((r) => r.rev === rev);
    return index < 0 ? null : this.revisions.length - index;
  }

  base() {
    return `/api/personas/${seg(this.personaId)}/cortex/${seg(this.filename)}/history`;
  }

  /** Lists the revisions of `filename`; `select` picks one ("latest" or a rev) to show. */
  async load(personaId, filename, select = null) {
    this.personaId = personaId;
    this.filename = filename;
    byId('history-heading').textContent = t('settings.history.heading_of', { filename });
    const data = await api.get(this.base());
    if (this.personaId !== personaId || this.filename !== filename) return;
    this.revisions = Array.isArray(data.revisions) ? data.revisions : [];
    const keep = this.revisions.some((r) => r.rev === this.selected) ? this.selected : null;
    const listed = typeof select === 'number' && this.revisions.some((r) => r.rev === select);
    const wanted = select === 'latest' || (typeof select === 'number' && !listed)
      ? this.revisions[0]?.rev : (select ?? keep);
    this.selected = null;
    this.render();
    if (wanted != null) await this.show(wanted);
    else this.view.hidden = true;
  }

  render() {
    const latest = this.revisions[0]?.rev;
    this.list.replaceChildren(...this.revisions.map((revision, index) => {
      const version = this.revisions.length - index;
      const author = authorOf(revision.author);
      const button = h('button', {
        type: 'button', class: 'history-item', dataset: { rev: revision.rev },
        'aria-current': revision.rev === this.selected ? 'true' : null,
        onClick: () => this.show(revision.rev),
      },
      h('span', { class: 'history-head' },
        h('span', { class: 'history-rev', text: `#${version}`, title: t('settings.history.version_of', { version, filename: this.filename }) }),
        h('span', { class: `badge author author-${revision.author}`, text: author }),
        revision.rev === latest ? h('span', { class: 'badge', text: t('settings.history.current_badge') }) : null),
      h('time', { class: 'history-when', datetime: revision.created_at, title: formatDateTime(revision.created_at),
        text: formatRelative(revision.created_at) }),
      h('span', { class: 'history-summary', text: revision.summary || describe(revision) }));
      return h('li', {}, button, sourceLink(this.personaId, revision));
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
    const author = authorOf(detail.author);
    const version = this.version(rev);
    byId('diff-title').textContent = version > 1
      ? t('settings.history.diff_title', { version, previous: version - 1, filename: this.filename })
      : t('settings.history.diff_title_first', { version, filename: this.filename });
    const counts = renderDiff(byId('diff'), detail.diff);
    const undone = detail.reverts ? this.version(detail.reverts) : null;
    byId('diff-meta').textContent = [author, formatDateTime(detail.created_at),
      t('settings.history.counts', { added: counts.added, removed: counts.removed }), detail.summary,
      undone ? t('settings.history.undoes', { version: undone }) : null]
      .filter(Boolean).join(' · ');
    const current = this.revisions[0] && this.revisions[0].rev === rev;
    this.restoreButton.hidden = current;
    byId('diff-current').hidden = !current;
    this.restoreButton.textContent = t('settings.history.restore_version', { version });
    this.view.hidden = false;
    if (this.revealNext) {
      this.revealNext = false;
      this.view.scrollIntoView({ block: 'start' });
      byId('diff').focus({ preventScroll: true });
    }
  }

  async restore() {
    const rev = this.selected;
    if (rev == null) return;
    const unsaved = this.isDirty(this.filename) ? ` ${t('settings.history.restore_draft_kept')}` : '';
    const version = this.version(rev);
    const ok = await confirmAction(t('settings.history.restore_text', { filename: this.filename, version, unsaved }),
      { title: t('settings.history.restore_title', { version }), confirm: t('settings.history.restore_confirm') });
    if (!ok) return;
    try {
      const response = await request('POST', `${this.base()}/${seg(rev)}/restore`, { body: {} });
      this.onRestored(response);
      toast(t('settings.history.restored', { version }));
      await this.load(this.personaId, this.filename, 'latest');
    } catch (err) {
      toast(err.message, { error: true });
    }
  }
}

/** Where an AI revision came from: a link that opens the conversation at those messages
 * (`derived`), or at the messages whose retraction it handled (`retracted`). */
function sourceLink(personaId, revision) {
  const source = revision.source;
  if (!source || !source.message_ids?.length) return null;
  const ids = source.message_ids;
  const range = ids.length > 1
    ? t('settings.history.source.messages', { first: ids[0], last: ids[ids.length - 1] })
    : t('settings.history.source.message', { id: ids[0] });
  const params = new URLSearchParams({ persona: personaId, session: source.session_id, message: String(ids[0]) });
  const sessions = source.sessions?.length > 1
    ? t('settings.history.source.sessions', { count: source.sessions.length }) : '';
  const retracted = source.kind === 'retracted';
  return h('a', {
    class: `history-source history-source-${source.kind}`, href: `/?${params}`,
    text: t(retracted ? 'settings.history.source.retracted' : 'settings.history.source.from', { range, sessions }),
    title: t(retracted ? 'settings.history.source.retracted_title' : 'settings.history.source.from_title'),
  });
}

function describe(revision) {
  return t(AUTHORS.includes(revision.author) ? `settings.history.summary.${revision.author}` : 'settings.history.summary.other');
}
