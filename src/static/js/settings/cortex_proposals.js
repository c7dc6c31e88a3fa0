// Review mode: the persona's pending proposal, its diff per file in the history's style (with
// invisible characters shown), and accept / edit-then-accept / reject, with the conflict view
// for a stale proposal whose edits no longer apply.
import { api, request, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { renderDiff } from '../lib/diff.js';
import { toast } from '../lib/ui.js';
import { hiddenCount, visible } from './invisible.js';
import { t, tn } from '../lib/i18n.js';

export class CortexProposals {
  constructor({ onApplied }) {
    this.onApplied = onApplied;
    this.personaId = null;
    this.list = byId('proposal-list');
    this.count = byId('proposals-count');
    this.view = byId('proposal-view');
  }

  setPersona(personaId) {
    this.personaId = personaId;
    return this.load();
  }

  base() {
    return `/api/personas/${seg(this.personaId)}/cortex/proposals`;
  }

  async load() {
    if (!this.personaId) return;
    const data = await api.get(`${this.base()}?status=pending`);
    this.count.textContent = String(data.pending);
    this.list.replaceChildren(...data.proposals.map((p) => h('li', {},
      h('button', { type: 'button', class: 'btn btn-small proposal-open', dataset: { id: p.id },
        onClick: () => this.open(p.id).catch(report),
        text: t('settings.review.proposal_item', { summary: p.summary || t('settings.review.proposed_change'), files: p.files.map((f) => f.filename).join(', ') }) }))));
    if (!data.proposals.length) {
      this.list.replaceChildren(h('li', { class: 'muted small', text: t('settings.review.nothing') }));
      this.view.hidden = true;
    } else if (this.view.hidden || !data.proposals.some((p) => p.id === this.view.dataset.id)) {
      await this.open(data.proposals[0].id);
    }
  }

  async open(id) {
    const proposal = await api.get(`${this.base()}/${seg(id)}`);
    this.view.dataset.id = id;
    this.view.hidden = false;
    byId('proposal-summary').textContent = visible(proposal.summary);
    byId('proposal-files').replaceChildren(...proposal.files.map((file) => this.fileCard(proposal, file)));
  }

  /** Opens a proposal and brings it into view with focus on its title (the job status links here). */
  async reveal(id) {
    await this.open(id);
    const title = byId('proposal-title');
    title.tabIndex = -1;
    this.view.scrollIntoView({ block: 'center' });
    title.focus();
  }

  fileCard(proposal, file) {
    const diff = h('pre', { class: 'diff', tabindex: '0' });
    renderDiff(diff, visible(file.stale && file.diff_current ? file.diff_current : file.diff));
    const hidden = hiddenCount(file.content);
    const editor = h('textarea', { class: 'editor-text proposal-edit', hidden: true,
      'aria-label': t('settings.review.edited_text_of', { filename: file.filename }) });
    const card = h('div', { class: 'proposal-file', dataset: { file: file.filename, status: file.status } },
      h('h5', { text: `${file.filename} · ${file.status}` }),
      file.stale ? h('p', { class: `small ${file.conflict ? 'form-error' : 'muted'} proposal-stale`,
        text: file.conflict
          ? t('settings.review.conflict')
          : t('settings.review.stale') }) : null,
      hidden ? h('p', { class: 'form-error small', text: tn('settings.review.hidden_chars', hidden) }) : null,
      diff, editor);
    if (file.status !== 'pending') return card;
    const editText = file.conflict ? file.current_content : (file.rebased ?? file.content);
    const acceptEdited = h('button', { type: 'button', class: 'btn btn-primary', hidden: true,
      text: t('settings.review.accept_edited'),
      onClick: () => this.decide(proposal.id, 'accept', { filename: file.filename, content: editor.value },
        file.current_revision) });
    card.append(h('div', { class: 'row proposal-actions' },
      h('button', { type: 'button', class: 'btn btn-primary', text: t('settings.review.accept'), disabled: file.conflict,
        onClick: () => this.decide(proposal.id, 'accept', { filename: file.filename }) }),
      h('button', { type: 'button', class: 'btn btn-quiet', text: t('settings.review.edit'),
        onClick: () => { editor.hidden = false; editor.value = editText; acceptEdited.hidden = false; editor.focus(); } }),
      acceptEdited,
      h('button', { type: 'button', class: 'btn btn-danger-quiet', text: t('settings.review.reject'),
        onClick: () => this.decide(proposal.id, 'reject', { filename: file.filename }) })));
    if (file.conflict) {
      editor.hidden = false;
      editor.value = editText;
      acceptEdited.hidden = false;
    }
    return card;
  }

  async decide(id, action, body, revision) {
    const headers = revision ? { 'If-Match': `"${revision}"` } : {};
    try {
      await request('POST', `${this.base()}/${seg(id)}/${action}`, { body, headers });
      toast(t(action === 'accept' ? 'settings.review.accepted' : 'settings.review.rejected', { filename: body.filename }));
      await this.onApplied(body.filename);
    } catch (err) {
      report(err);
    }
    await this.open(id).catch(report);
    await this.load().catch(report);
  }
}

function report(err) {
  toast(err.message, { error: true });
}
