// The cortex editor: three tabs, a Markdown textarea with preview, the size meter, and saving
// with If-Match. A draft's base revision never moves under it: a newer revision arriving while a
// draft exists (a memory update, another tab, a restore, a 412 on save) opens the merge view.
import { ApiError, request, seg } from '../lib/api.js';
import { byId } from '../lib/dom.js';
import { renderPinnedPreview } from './cortex_pins.js';
import { confirmAction, toast } from '../lib/ui.js';
import { ConflictView } from './cortex_conflict.js';
import { markTabs, moveTab, updateMeter } from './cortex_tabs.js';
import { t } from '../lib/i18n.js';

export const FILES = ['memory.md', 'soul.md', 'relationship.md'];
const VIEW_KEY = 'persona-cortex:editor-view';

function fileUrl(personaId, filename) {
  return `/api/personas/${seg(personaId)}/cortex/${seg(filename)}`;
}

function fromResponse({ data, headers }) {
  return { ...data, etag: headers.get('ETag') || `"${data.revision}"` };
}

function fromCurrent(current) {
  return { ...current, etag: `"${current.revision}"` };
}

/** Edits one persona's three cortex files; `onSaved(filename)` runs after every change. */
export class CortexEditor {
  /** `onIncoming(filename)`: a save found a newer revision (412), which the history lacks. */
  constructor({ onSaved, onSelect, onIncoming }) {
    this.onSaved = onSaved;
    this.onSelect = onSelect;
    this.onIncoming = onIncoming;
    this.personaId = null;
    this.filename = FILES[0];
    this.files = {};
    this.shown = null;
    this.previewTimer = null;
    this.text = byId('cortex-text');
    this.body = byId('editor-body');
    this.preview = byId('cortex-preview');
    this.meter = byId('cortex-meter');
    this.count = byId('cortex-count');
    this.status = byId('cortex-status');
    this.saveButton = byId('cortex-save');
    this.revertButton = byId('cortex-revert');
    this.tabs = [...byId('cortex-tabs').querySelectorAll('[role="tab"]')];
    this.conflict = new ConflictView({
      hide: [this.body, byId('editor-foot')],
      save: (text) => this.saveMerged(text),
      edit: (text) => this.editMerged(text),
      discard: () => this.discardDraft(),
    });
    this.bind();
    this.setView(window.localStorage.getItem(VIEW_KEY) || 'edit');
  }

  bind() {
    this.tabs.forEach((tab) => {
      tab.addEventListener('click', () => this.select(tab.dataset.file));
      tab.addEventListener('keydown', (event) => moveTab(event, this.tabs, (file) => this.select(file)));
    });
    document.querySelectorAll('.segmented [data-view]').forEach((button) => {
      button.addEventListener('click', () => this.setView(button.dataset.view));
    });
    this.text.addEventListener('input', () => this.edited());
    this.text.addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === 's') {
        event.preventDefault();
        this.save();
      }
    });
    this.saveButton.addEventListener('click', () => this.save());
    this.revertButton.addEventListener('click', () => this.revert());
    byId('cortex-reset').addEventListener('click', () => this.reset());
    window.addEventListener('beforeunload', (event) => {
      if (this.anyDirty()) event.preventDefault();
    });
  }

  /** True when any file has unsaved edits. */
  anyDirty() {
    return FILES.some((name) => this.isDirty(name));
  }

  isDirty(filename) {
    const file = this.files[filename];
    return Boolean(file && file.draft !== file.server.content);
  }

  /** Loads a persona's three files (each with its ETag) and shows `filename`. */
  async load(personaId, filename = this.filename) {
    this.personaId = personaId;
    this.hideConflict();
    this.setStatus('');
    const loaded = await Promise.all(FILES.map((name) => request('GET', fileUrl(personaId, name))));
    this.files = {};
    this.shown = null;
    loaded.forEach((response, i) => {
      const server = fromResponse(response);
      this.files[FILES[i]] = { server, draft: server.content };
    });
    this.select(FILES.includes(filename) ? filename : FILES[0]);
  }

  /** Reads one file again after a change elsewhere; a draft is merged, never rebased silently. */
  async refresh(filename) {
    const file = this.files[filename];
    if (!file || !this.personaId) return;
    const personaId = this.personaId;
    const server = fromResponse(await request('GET', fileUrl(personaId, filename)));
    if (personaId === this.personaId && this.files[filename] === file) this.receive(filename, server);
  }

  /** Takes a newer revision of `filename`: shown at once without a draft, merged with one. */
  receive(filename, server) {
    const file = this.files[filename];
    const known = file.incoming || file.server;
    if (server.revision <= known.revision) return;
    if (!this.isDirty(filename)) {
      this.adopt(filename, server);
      return;
    }
    file.incoming = server;
    this.markTabs();
    if (filename === this.filename) this.openMerge();
  }

  select(filename) {
    if (this.shown && this.files[this.shown]) this.files[this.shown].draft = this.text.value;
    this.filename = filename;
    this.tabs.forEach((tab) => {
      const active = tab.dataset.file === filename;
      tab.setAttribute('aria-selected', String(active));
      tab.tabIndex = active ? 0 : -1;
      if (active) byId('cortex-panel').setAttribute('aria-labelledby', tab.id);
    });
    byId('cortex-text-label').textContent = t('settings.editor.contents_of', { filename });
    this.hideConflict();
    this.setStatus('');
    this.show();
    if (this.files[filename]?.incoming) this.openMerge();
    this.onSelect(filename);
  }

  show() {
    const file = this.files[this.filename];
    if (!file) return;
    this.text.value = file.draft;
    this.shown = this.filename;
    byId('cortex-rev').textContent = t('settings.editor.revision', { filename: this.filename, version: file.server.version });
    this.edited();
  }

  markTabs() {
    markTabs(this.tabs, this.files, (name) => this.isDirty(name));
  }

  edited() {
    const file = this.files[this.filename];
    if (!file) return;
    file.draft = this.text.value;
    const dirty = this.isDirty(this.filename);
    this.saveButton.disabled = !dirty;
    this.revertButton.disabled = !dirty;
    updateMeter(this.meter, this.count, file.draft.length, file.server.budget);
    this.markTabs();
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.renderPreview(), 120);
  }

  renderPreview() {
    if (this.body.dataset.view !== 'edit') renderPinnedPreview(this.preview, this.text.value);
  }

  setView(view) {
    const valid = ['edit', 'preview', 'split'].includes(view) ? view : 'edit';
    this.body.dataset.view = valid;
    document.querySelectorAll('.segmented [data-view]').forEach((button) => {
      button.setAttribute('aria-pressed', String(button.dataset.view === valid));
    });
    window.localStorage.setItem(VIEW_KEY, valid);
    this.renderPreview();
  }

  setStatus(message, tone = '') {
    this.status.textContent = message;
    this.status.dataset.tone = tone;
  }

  /** Saves the draft on its own base revision; a newer revision on the server opens the merge. */
  async save() {
    const file = this.files[this.filename];
    if (!file) return;
    if (file.incoming) {
      this.openMerge();
      return;
    }
    this.saveButton.disabled = true;
    await this.put(this.filename, this.text.value, file.server.etag, 'settings.editor.saved_as');
  }

  /** PUTs `content` with If-Match `etag`; a 412 turns the newest revision into a merge. */
  async put(filename, content, etag, statusKey) {
    const file = this.files[filename];
    try {
      const response = await request('PUT', fileUrl(this.personaId, filename), {
        body: { content }, headers: { 'If-Match': etag },
      });
      this.adopt(filename, fromResponse(response));
      this.setStatus(t(statusKey, { version: file.server.version }), 'ok');
      toast(t('settings.editor.file_saved', { filename }));
      this.onSaved(filename);
    } catch (err) {
      if (err instanceof ApiError && err.status === 412 && err.data?.error?.current) {
        file.incoming = fromCurrent(err.data.error.current);
        this.openMerge();
        this.onIncoming(filename);
      } else {
        this.setStatus(err.message, 'error');
        this.saveButton.disabled = !this.isDirty(filename);
      }
    }
  }

  /** Makes `server` the file's base revision and `draft` its text, closing any merge. */
  adopt(filename, server, draft = server.content) {
    Object.assign(this.files[filename], { server, draft, incoming: null });
    if (filename !== this.filename) return;
    this.hideConflict();
    this.show();
  }

  openMerge() {
    const file = this.files[this.filename];
    this.markTabs();
    this.conflict.open(file.server, file.incoming, file.draft);
    this.setStatus('');
  }

  hideConflict() {
    this.conflict.close();
  }

  async saveMerged(text) {
    const file = this.files[this.filename];
    await this.put(this.filename, text, file.incoming.etag, 'settings.editor.merged_saved_as');
  }

  /** The merged text becomes the draft, now based on the newest revision. */
  editMerged(text) {
    const file = this.files[this.filename];
    this.adopt(this.filename, file.incoming, text);
    this.setStatus(t('settings.editor.merged_in_editor', { version: file.server.version }), 'ok');
    this.text.focus();
  }

  async discardDraft() {
    const file = this.files[this.filename];
    const ok = await confirmAction(t('settings.editor.discard_text', { version: file.incoming.version }),
      { title: t('settings.editor.discard_title'), confirm: t('settings.editor.discard_confirm') });
    if (!ok || !file.incoming) return;
    this.adopt(this.filename, file.incoming);
    this.setStatus(t('settings.editor.showing_saved', { version: file.server.version }), 'ok');
    this.text.focus();
  }

  revert() {
    const file = this.files[this.filename];
    if (!file) return;
    this.adopt(this.filename, file.incoming || file.server);
    this.setStatus(t('settings.editor.discarded'));
  }

  async reset() {
    const filename = this.filename;
    const dirty = this.isDirty(filename) ? ` ${t('settings.editor.reset_dirty')}` : '';
    const ok = await confirmAction(t('settings.editor.reset_text', { filename, dirty }),
      { title: t('settings.editor.reset_title', { filename }), confirm: t('settings.editor.reset_confirm') });
    if (!ok) return;
    try {
      const response = await request('POST', `${fileUrl(this.personaId, filename)}/reset`, { body: {} });
      this.adopt(filename, fromResponse(response));
      this.setStatus(t('settings.editor.reset_done', { version: response.data.version }), 'ok');
      this.onSaved(filename);
    } catch (err) {
      this.setStatus(err.message, 'error');
    }
  }

  /** After a restore from the history: shown at once, or merged with a draft. */
  applyRestored(response) {
    const dirty = this.isDirty(this.filename);
    this.receive(this.filename, fromResponse(response));
    if (!dirty) this.setStatus(t('settings.editor.restored_as', { version: this.files[this.filename].server.version }), 'ok');
  }
}
