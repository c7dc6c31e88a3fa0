// World info (lorebooks) of the persona being edited: its books, each book's settings and
// entries, one entry editor, and shared books to attach or detach (docs/world-info.md).
import { api, listOf, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { clearProblems, withinLimits } from '../lib/forms.js';
import { icon } from '../lib/icons.js';
import { confirmAction, toast } from '../lib/ui.js';
import { t } from '../lib/i18n.js';

const CHECKS = { enabled: 'we-enabled', constant: 'we-constant', case_sensitive: 'we-case',
  match_whole_words: 'we-whole', selective: 'we-selective' };

/** Comma-separated keys as a list (blank ones dropped). */
function keysOf(text) {
  return text.split(',').map((key) => key.trim()).filter(Boolean);
}

/** The world info panel under the persona form. */
export class WorldSettings {
  constructor() {
    this.panel = byId('world-panel');
    this.persona = null;
    this.books = [];
    this.book = null;
    this.entry = null;
    const on = (id, handler) => byId(id).addEventListener('click', () => handler().catch(
      (err) => toast(err.message, { error: true })));
    byId('world-book').addEventListener('change', () => this.select(Number(byId('world-book').value)));
    on('world-create-own', () => this.createOwn());
    on('world-detach', () => this.detach());
    on('wb-save', () => this.saveBook());
    on('wb-delete', () => this.deleteBook());
    on('world-add-entry', async () => this.editEntry(null));
    on('we-save', () => this.saveEntry());
    on('we-cancel', async () => this.closeEntry());
    on('world-attach', () => this.attach());
    on('world-new-shared', () => this.createShared());
  }

  /** Shows the panel for `persona` (hidden for a new one, which has no id yet). */
  async show(persona) {
    this.persona = persona;
    this.panel.hidden = !persona;
    if (persona) await this.load();
  }

  hide() {
    this.panel.hidden = true;
    this.persona = null;
  }

  async load(selected = this.book?.id) {
    const pid = seg(this.persona.id);
    this.books = listOf(await api.get(`/api/personas/${pid}/world-books`), 'books');
    const all = listOf(await api.get('/api/world-books'), 'books');
    const attached = new Set(this.books.map((book) => book.id));
    byId('world-attach-select').replaceChildren(...all.filter((book) => !attached.has(book.id))
      .map((book) => h('option', { value: book.id, text: book.name || t('settings.world.unnamed') })));
    const none = !byId('world-attach-select').options.length;
    byId('world-attach-select').hidden = none;
    byId('world-attach').hidden = none;
    byId('world-book').replaceChildren(...this.books.map((book) => h('option', {
      value: book.id, text: this.label(book) })));
    byId('world-create-own').hidden = this.books.some((book) => book.persona_id === this.persona.id);
    const next = this.books.find((book) => book.id === selected) || this.books[0] || null;
    this.select(next ? next.id : null);
  }

  label(book) {
    const name = book.name || t('settings.world.unnamed');
    return book.persona_id === this.persona.id ? t('settings.world.own_label', { name }) : name;
  }

  select(bookId) {
    this.book = this.books.find((book) => book.id === bookId) || null;
    byId('world-book').hidden = !this.book;
    byId('world-book-view').hidden = !this.book;
    byId('world-detach').hidden = !this.book || this.book.persona_id === this.persona.id;
    this.closeEntry();
    if (!this.book) return;
    byId('world-book').value = String(this.book.id);
    byId('wb-name').value = this.book.name;
    byId('wb-scan-depth').value = String(this.book.scan_depth);
    byId('wb-budget').value = String(this.book.token_budget);
    byId('wb-recursive').checked = this.book.recursive_scanning;
    clearProblems(byId('wb-fields'), byId('wb-error'));
    byId('world-entries').replaceChildren(...this.book.entries.map((entry) => this.entryRow(entry)));
  }

  entryRow(entry) {
    const title = entry.comment || entry.keys.join(', ') || t('settings.world.unnamed');
    const flags = [entry.constant ? t('settings.world.constant_badge') : null,
      entry.enabled ? null : t('settings.world.disabled_badge')].filter(Boolean);
    return h('li', { class: 'world-entry', dataset: { entryId: entry.id } },
      h('span', { class: 'world-entry-title', text: title }),
      ...flags.map((flag) => h('span', { class: 'badge', text: flag })),
      entry.comment ? h('span', { class: 'muted small', text: entry.keys.join(', ') }) : null,
      h('span', { class: 'world-entry-actions' },
        h('button', { type: 'button', class: 'btn btn-quiet btn-small', 'aria-label': t('settings.world.edit_label', { name: title }),
          onClick: () => this.editEntry(entry) }, icon('pencil', 14), t('settings.world.edit')),
        h('button', { type: 'button', class: 'btn btn-danger-quiet btn-small', 'aria-label': t('settings.world.delete_label', { name: title }),
          onClick: () => this.deleteEntry(entry).catch((err) => toast(err.message, { error: true })) },
        icon('trash', 14), t('settings.world.delete'))));
  }

  editEntry(entry) {
    this.entry = entry;
    const value = entry || { comment: '', keys: [], content: '', secondary_keys: [], enabled: true,
      constant: false, case_sensitive: false, match_whole_words: true, selective: false,
      selective_logic: 'and_any', insertion_order: 100, position: 'before_char' };
    byId('we-comment').value = value.comment;
    byId('we-keys').value = value.keys.join(', ');
    byId('we-secondary').value = value.secondary_keys.join(', ');
    byId('we-content').value = value.content;
    byId('we-logic').value = value.selective_logic;
    byId('we-order').value = String(value.insertion_order);
    byId('we-position').value = value.position;
    for (const [name, id] of Object.entries(CHECKS)) byId(id).checked = value[name];
    byId('we-error').textContent = '';
    byId('world-entry-form').hidden = false;
    byId('we-content').focus();
  }

  closeEntry() {
    this.entry = null;
    byId('world-entry-form').hidden = true;
  }

  async saveEntry() {
    if (!withinLimits(byId('world-entry-form'), byId('we-error'))) return;
    const order = Number(byId('we-order').value);
    const body = { comment: byId('we-comment').value.trim(), keys: keysOf(byId('we-keys').value),
      secondary_keys: keysOf(byId('we-secondary').value), content: byId('we-content').value,
      selective_logic: byId('we-logic').value, position: byId('we-position').value,
      insertion_order: Number.isInteger(order) ? order : 100 };
    for (const [name, id] of Object.entries(CHECKS)) body[name] = byId(id).checked;
    const base = `/api/world-books/${seg(this.book.id)}/entries`;
    try {
      if (this.entry) await api.patch(`${base}/${seg(this.entry.id)}`, body);
      else await api.post(base, body);
    } catch (err) {
      byId('we-error').textContent = err.message;
      return;
    }
    toast(t('settings.world.entry_saved'));
    await this.load(this.book.id);
  }

  async deleteEntry(entry) {
    const name = entry.comment || entry.keys.join(', ') || t('settings.world.unnamed');
    if (!await confirmAction(t('settings.world.delete_entry_text', { name }))) return;
    await api.del(`/api/world-books/${seg(this.book.id)}/entries/${seg(entry.id)}`);
    await this.load(this.book.id);
  }

  async saveBook() {
    const error = byId('wb-error');
    if (!withinLimits(byId('wb-fields'), error)) return;
    try {
      await api.patch(`/api/world-books/${seg(this.book.id)}`, {
        name: byId('wb-name').value.trim(), scan_depth: Number(byId('wb-scan-depth').value),
        token_budget: Number(byId('wb-budget').value), recursive_scanning: byId('wb-recursive').checked });
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    toast(t('settings.world.book_saved'));
    await this.load(this.book.id);
  }

  async deleteBook() {
    const name = this.book.name || t('settings.world.unnamed');
    if (!await confirmAction(t('settings.world.delete_book_text', { name }))) return;
    await api.del(`/api/world-books/${seg(this.book.id)}`);
    await this.load(null);
  }

  async createOwn() {
    const book = await api.post('/api/world-books', { persona_id: this.persona.id, name: this.persona.name });
    await this.load(book.id);
  }

  async createShared() {
    const name = byId('world-new-name').value.trim();
    const book = await api.post('/api/world-books', { name });
    await api.put(`/api/personas/${seg(this.persona.id)}/world-books/${seg(book.id)}`, {});
    byId('world-new-name').value = '';
    await this.load(book.id);
  }

  async attach() {
    const bookId = Number(byId('world-attach-select').value);
    await api.put(`/api/personas/${seg(this.persona.id)}/world-books/${seg(bookId)}`, {});
    await this.load(bookId);
  }

  async detach() {
    await api.del(`/api/personas/${seg(this.persona.id)}/world-books/${seg(this.book.id)}`);
    await this.load(null);
  }
}
