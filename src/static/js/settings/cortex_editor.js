// The cortex editor: three tabs, a Markdown textarea with preview, the size meter, and saving
// with If-Match. A 412 opens the conflict view: both versions side by side, keep mine (after
// editing it into a merge if wanted) or take theirs.
import { ApiError, request, seg } from '../lib/api.js';
import { byId } from '../lib/dom.js';
import { renderMarkdown } from '../lib/markdown.js';
import { confirmAction, toast } from '../lib/ui.js';
import { ConflictView } from './cortex_conflict.js';

export const FILES = ['memory.md', 'soul.md', 'relationship.md'];
const VIEW_KEY = 'persona-cortex:editor-view';
const NUMBER = new Intl.NumberFormat();

function fileUrl(personaId, filename) {
  return `/api/personas/${seg(personaId)}/cortex/${seg(filename)}`;
}

function fromResponse({ data, headers }) {
  return { ...data, etag: headers.get('ETag') || `"${data.revision}"` };
}

/** Edits one persona's three cortex files; `onSaved(filename)` runs after every change. */
export class CortexEditor {
  constructor({ onSaved, onSelect }) {
    this.onSaved = onSaved;
    this.onSelect = onSelect;
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
      keepMine: (content, theirs) => this.keepMine(content, theirs),
      takeTheirs: (theirs) => this.takeTheirs(theirs),
    });
    this.bind();
    this.setView(window.localStorage.getItem(VIEW_KEY) || 'edit');
  }

  bind() {
    this.tabs.forEach((tab) => {
      tab.addEventListener('click', () => this.select(tab.dataset.file));
      tab.addEventListener('keydown', (event) => this.tabKey(event));
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

  tabKey(event) {
    const index = this.tabs.indexOf(event.currentTarget);
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: this.tabs.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = this.tabs[(moves[event.key] + this.tabs.length) % this.tabs.length];
    next.focus();
    this.select(next.dataset.file);
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

  /** Reads one file again after a change elsewhere; unsaved edits stay (a save then conflicts). */
  async refresh(filename) {
    const file = this.files[filename];
    if (!file || !this.personaId) return;
    const server = fromResponse(await request('GET', fileUrl(this.personaId, filename)));
    const keepDraft = this.isDirty(filename);
    file.server = server;
    if (!keepDraft) file.draft = server.content;
    if (filename === this.filename) this.show();
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
    byId('cortex-text-label').textContent = `Contents of ${filename}`;
    this.hideConflict();
    this.setStatus('');
    this.show();
    this.onSelect(filename);
  }

  show() {
    const file = this.files[this.filename];
    if (!file) return;
    this.text.value = file.draft;
    this.shown = this.filename;
    byId('cortex-rev').textContent = `${this.filename} · revision ${file.server.revision}`;
    this.edited();
  }

  edited() {
    const file = this.files[this.filename];
    if (!file) return;
    file.draft = this.text.value;
    const dirty = this.isDirty(this.filename);
    this.saveButton.disabled = !dirty;
    this.revertButton.disabled = !dirty;
    this.updateMeter(file.draft.length, file.server.budget);
    this.markTabs();
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.renderPreview(), 120);
  }

  markTabs() {
    this.tabs.forEach((tab) => {
      const dirty = this.isDirty(tab.dataset.file);
      let dot = tab.querySelector('.dirty-dot');
      if (dirty && !dot) {
        dot = document.createElement('span');
        dot.className = 'dirty-dot';
        dot.title = 'Unsaved changes';
        tab.append(dot);
      } else if (!dirty && dot) dot.remove();
      tab.setAttribute('aria-description', dirty ? 'unsaved changes' : '');
    });
  }

  updateMeter(chars, budget) {
    const limit = budget || 12000;
    this.meter.max = limit;
    this.meter.low = Math.round(limit * 0.75);
    this.meter.high = Math.round(limit * 0.95);
    this.meter.optimum = 0;
    this.meter.value = Math.min(chars, limit);
    let text = `${NUMBER.format(chars)} / ${NUMBER.format(limit)} characters`;
    if (chars > limit * 4) text += ' — over the hard limit: saving will be refused';
    else if (chars > limit) text += ' — over budget: the persona will be asked to condense it';
    this.count.textContent = text;
    this.count.classList.toggle('meter-over', chars > limit);
  }

  renderPreview() {
    if (this.body.dataset.view !== 'edit') renderMarkdown(this.preview, this.text.value);
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

  /** Saves `content` based on the revision `etag`; a stale revision opens the conflict view. */
  async save(content = this.text.value, etag = null) {
    const file = this.files[this.filename];
    if (!file) return;
    const filename = this.filename;
    this.saveButton.disabled = true;
    try {
      const response = await request('PUT', fileUrl(this.personaId, filename), {
        body: { content }, headers: { 'If-Match': etag || file.server.etag },
      });
      file.server = fromResponse(response);
      file.draft = file.server.content;
      this.hideConflict();
      if (filename === this.filename) this.show();
      this.setStatus(`Saved as revision ${file.server.revision}.`, 'ok');
      toast(`${filename} saved`);
      this.onSaved(filename);
    } catch (err) {
      if (err instanceof ApiError && err.status === 412 && err.data?.error?.current) {
        this.showConflict(filename, err.data.error.current, content);
      } else {
        this.setStatus(err.message, 'error');
        this.saveButton.disabled = false;
      }
    }
  }

  showConflict(filename, current, mine) {
    this.conflict.open(this.files[filename].server.revision, current, mine);
    this.setStatus('');
  }

  hideConflict() {
    this.conflict.close();
  }

  async keepMine(content, theirs) {
    this.files[this.filename].server = theirs;
    await this.save(content, theirs.etag);
  }

  takeTheirs(theirs) {
    const file = this.files[this.filename];
    file.server = theirs;
    file.draft = file.server.content;
    this.hideConflict();
    this.show();
    this.setStatus(`Showing the saved version (revision ${file.server.revision}).`, 'ok');
    this.text.focus();
  }

  revert() {
    const file = this.files[this.filename];
    if (!file) return;
    file.draft = file.server.content;
    this.show();
    this.setStatus('Changes discarded.');
  }

  async reset() {
    const filename = this.filename;
    const dirty = this.isDirty(filename) ? ' Your unsaved changes are discarded.' : '';
    const ok = await confirmAction(`${filename} gets the empty template again. The current text `
      + `stays in the history, so you can restore it.${dirty}`,
    { title: `Reset ${filename}?`, confirm: 'Reset' });
    if (!ok) return;
    try {
      const response = await request('POST', `${fileUrl(this.personaId, filename)}/reset`, { body: {} });
      const file = this.files[filename];
      file.server = fromResponse(response);
      file.draft = file.server.content;
      this.show();
      this.setStatus(`Reset to the template (revision ${file.server.revision}).`, 'ok');
      this.onSaved(filename);
    } catch (err) {
      this.setStatus(err.message, 'error');
    }
  }

  /** After a restore from the history: the restored text becomes the editor's text. */
  applyRestored(response) {
    const file = this.files[this.filename];
    file.server = fromResponse(response);
    file.draft = file.server.content;
    this.hideConflict();
    this.show();
    this.setStatus(`Restored as revision ${file.server.revision}.`, 'ok');
  }
}
