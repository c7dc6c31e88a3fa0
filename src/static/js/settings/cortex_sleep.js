// Sleep: the persona's review mode and consolidation schedule, the last consolidation,
// "consolidate now", and the current file's archive with search and restore.
import { api, request, seg } from '../lib/api.js';
import { byId, formatDateTime, h } from '../lib/dom.js';
import { toast } from '../lib/ui.js';
import { t, tn } from '../lib/i18n.js';

const FIELDS = { 'mr-mode': 'memory_review', 'sleep-enabled': 'sleep_enabled',
  'sleep-sessions': 'sleep_sessions', 'sleep-hours': 'sleep_hours' };

export class CortexSleep {
  constructor({ onQueued, onRestored }) {
    this.onQueued = onQueued;
    this.onRestored = onRestored;
    this.personaId = null;
    this.filename = 'memory.md';
    for (const id of Object.keys(FIELDS)) byId(id).addEventListener('change', () => this.save().catch(report));
    byId('consolidate-now').addEventListener('click', () => this.consolidate().catch(report));
    byId('archive-q').addEventListener('input', () => this.loadArchive().catch(report));
  }

  base() {
    return `/api/personas/${seg(this.personaId)}/cortex`;
  }

  async setPersona(personaId) {
    this.personaId = personaId;
    const settings = await api.get(`${this.base()}/settings`);
    for (const [id, key] of Object.entries(FIELDS)) {
      const el = byId(id);
      if (el.type === 'checkbox') el.checked = settings[key];
      else el.value = String(settings[key]);
    }
    await Promise.all([this.status(), this.loadArchive()]);
  }

  async setFile(filename) {
    this.filename = filename;
    await this.loadArchive();
  }

  async save() {
    const body = {};
    for (const [id, key] of Object.entries(FIELDS)) {
      const el = byId(id);
      body[key] = el.type === 'checkbox' ? el.checked : (el.type === 'number' ? Number(el.value) : el.value);
    }
    await api.put(`${this.base()}/settings`, body);
    toast(t('settings.sleep.saved'));
    await this.status();
  }

  async status() {
    const status = await api.get(`${this.base()}/sleep`);
    const last = status.last_consolidation;
    const lastText = last
      ? t('settings.sleep.last', { when: formatDateTime(last.finished_at), outcome: last.status === 'done'
        ? (last.summary || t('settings.sleep.done')) : t('settings.sleep.failed', { error: last.error }) })
      : t('settings.sleep.never');
    const queued = status.job_id ? t('settings.sleep.queued') : '';
    byId('sleep-status').textContent = [lastText, tn('settings.sleep.sessions_since', status.sessions_since), queued]
      .filter(Boolean).join(' ');
    byId('sleep-status').dataset.job = status.job_id || '';
  }

  async consolidate() {
    const data = await api.post(`${this.base()}/consolidate`, {});
    toast(t('settings.sleep.consolidation_queued'));
    await this.status();
    this.onQueued?.(data.job);
  }

  async loadArchive() {
    if (!this.personaId) return;
    const q = byId('archive-q').value.trim();
    const query = q ? `?q=${encodeURIComponent(q)}` : '';
    const data = await api.get(`${this.base()}/${seg(this.filename)}/archive${query}`);
    const list = byId('archive-list');
    if (!data.entries.length) {
      list.replaceChildren(h('li', { class: 'muted small', text: q ? t('settings.archive.no_match') : t('settings.archive.empty') }));
      return;
    }
    list.replaceChildren(...data.entries.map((entry) => h('li', { class: 'archive-entry', dataset: { id: entry.id } },
      h('p', { class: 'small muted', text: [formatDateTime(entry.created_at), tn('settings.archive.chars', entry.chars), entry.restored_at ? t('settings.archive.restored_badge') : '']
        .filter(Boolean).join(' · ') }),
      h('pre', { class: 'archive-text', text: entry.text }),
      h('button', { type: 'button', class: 'btn btn-small', text: t('settings.archive.restore'),
        onClick: () => this.restore(entry).catch(report) }))));
  }

  async restore(entry) {
    const url = `${this.base()}/${seg(this.filename)}/archive/${entry.id}/restore`;
    const selection = String(window.getSelection() || '');
    const body = selection && entry.text.includes(selection) ? { text: selection } : {};
    await request('POST', url, { body });
    toast(t('settings.archive.restored'));
    await this.onRestored?.(this.filename);
    await this.loadArchive();
  }
}

function report(err) {
  toast(err.message, { error: true });
}
