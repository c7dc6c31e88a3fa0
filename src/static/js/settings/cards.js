// Character cards on the settings page: import by drag and drop or file picker with a preview
// before anything is created, export controls per persona, and the persona's picture.
import { ApiError, api, seg, unreachable } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { avatar, cardText } from '../lib/persona_view.js';
import { toast } from '../lib/ui.js';
import { errorMessage, t, tn } from '../lib/i18n.js';

/** Sends `file` as multipart field `file`; returns the JSON answer or throws ApiError. */
export async function sendFile(method, path, file) {
  const form = new FormData();
  form.append('file', file);
  let response;
  try {
    response = await fetch(path, { method, body: form, credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    throw await unreachable();
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || {};
    const code = error.code || `http_${response.status}`;
    const message = error.message || t('settings.cards.upload_failed', { status: response.status });
    throw new ApiError(response.status, code, errorMessage(code, message, error), data);
  }
  return data;
}

/** The import box: drop or pick a card, see the preview, then create the persona. */
export class CardImport {
  constructor({ onImported }) {
    this.onImported = onImported;
    this.file = null;
    this.drop = byId('card-drop');
    this.input = byId('card-file');
    this.preview = byId('card-preview');
    this.error = byId('card-error');
    this.input.addEventListener('change', () => this.input.files[0] && this.choose(this.input.files[0]));
    // The file input is the keyboard's way in (Tab, then Space); a click on the zone is a
    // shortcut for the mouse, so the zone itself is no button (one control may not hold another).
    this.drop.addEventListener('click', (event) => { if (event.target === this.drop) this.input.click(); });
    for (const kind of ['dragenter', 'dragover']) {
      this.drop.addEventListener(kind, (event) => { event.preventDefault(); this.drop.classList.add('dragging'); });
    }
    this.drop.addEventListener('dragleave', () => this.drop.classList.remove('dragging'));
    this.drop.addEventListener('drop', (event) => {
      event.preventDefault();
      this.drop.classList.remove('dragging');
      const file = event.dataTransfer && event.dataTransfer.files[0];
      if (file) this.choose(file);
    });
    byId('card-cancel').addEventListener('click', () => this.reset());
    byId('card-create').addEventListener('click', () => this.create());
  }

  async choose(file) {
    this.file = file;
    this.error.textContent = '';
    try {
      this.show(await sendFile('POST', '/api/personas/import?preview=1', file));
    } catch (err) {
      this.reset();
      this.error.textContent = err.message;
    }
  }

  show(preview) {
    const persona = preview.persona;
    const img = byId('card-preview-avatar');
    img.hidden = !persona.avatar_url;
    if (persona.avatar_url) img.src = persona.avatar_url;
    byId('card-preview-name').textContent = persona.name;
    const extra = persona.alternate_greetings.length;
    byId('card-preview-meta').textContent = [
      t('settings.cards.meta', { version: preview.spec_version, format: preview.format }),
      extra ? tn('settings.cards.more_greetings', extra) : '',
      preview.includes_memories ? t('settings.cards.includes_memories') : '',
    ].filter(Boolean).join(' · ');
    byId('card-preview-greeting').textContent = cardText(persona.greeting, persona) || t('settings.cards.no_greeting');
    const clash = byId('card-preview-clash');
    clash.hidden = !preview.name_clash;
    clash.textContent = t('settings.cards.name_clash', { name: persona.name });
    const ignored = preview.ignored || [];
    byId('card-preview-ignored-box').hidden = ignored.length === 0;
    byId('card-preview-ignored').replaceChildren(...ignored.map((note) => h('li', { text: note })));
    this.preview.hidden = false;
    byId('card-create').focus();
  }

  async create() {
    if (!this.file) return;
    try {
      const persona = await sendFile('POST', '/api/personas/import', this.file);
      toast(t('settings.cards.imported', { name: persona.name }));
      this.reset();
      await this.onImported(persona);
    } catch (err) {
      this.error.textContent = err.message;
    }
  }

  reset() {
    this.file = null;
    this.input.value = '';
    this.preview.hidden = true;
  }
}

/** Export controls for one persona: format, "include memories" (off by default), download. */
export function exportControls(persona) {
  const format = h('select', { 'aria-label': t('settings.cards.export_format', { name: persona.name }) },
    h('option', { value: 'png', text: t('settings.cards.format_png') }), h('option', { value: 'json', text: t('settings.cards.format_json') }),
    h('option', { value: 'charx', text: 'CHARX' }),
    h('option', { value: 'archive', text: t('settings.cards.format_archive') }));
  const memories = h('input', { type: 'checkbox', 'aria-label': t('settings.cards.include_memories') });
  const link = h('a', { class: 'btn btn-small persona-export-link', download: '' }, t('settings.cards.export'));
  const update = () => {
    const archive = format.value === 'archive';
    if (archive !== memories.disabled) memories.checked = archive;
    memories.disabled = archive;
    const query = new URLSearchParams({ format: format.value, include_memories: memories.checked ? '1' : '0' });
    link.href = `/api/personas/${seg(persona.id)}/export?${query}`;
  };
  format.addEventListener('change', update);
  memories.addEventListener('change', update);
  update();
  return h('div', { class: 'persona-export' }, format,
    h('label', { class: 'check' }, memories, t('settings.cards.include_memories')), link,
    h('a', { class: 'btn btn-quiet btn-small', href: `/api/personas/${seg(persona.id)}/export/af`, download: '' }, 'Letta .af'));
}

/** The picture controls of the persona form (shown when editing). */
export class AvatarControls {
  constructor({ onChange }) {
    this.onChange = onChange;
    this.persona = null;
    this.row = byId('p-avatar-row');
    byId('p-avatar-file').addEventListener('change', (event) => this.upload(event.target));
    byId('p-avatar-remove').addEventListener('click', () => this.remove());
  }

  show(persona) {
    this.persona = persona;
    this.row.hidden = !persona;
    if (!persona) return;
    byId('p-avatar-view').replaceChildren(avatar(persona, 40));
    byId('p-avatar-remove').hidden = !persona.avatar_url;
  }

  async upload(input) {
    const file = input.files[0];
    input.value = '';
    if (!file || !this.persona) return;
    try {
      this.show(await sendFile('PUT', `/api/personas/${seg(this.persona.id)}/avatar`, file));
      toast(t('settings.personas.picture_saved'));
      await this.onChange();
    } catch (err) {
      toast(err.message, { error: true });
    }
  }

  async remove() {
    if (!this.persona) return;
    try {
      this.show(await api.del(`/api/personas/${seg(this.persona.id)}/avatar`));
      await this.onChange();
    } catch (err) {
      toast(err.message, { error: true });
    }
  }
}
