// Character cards on the settings page: import by drag and drop or file picker with a preview
// before anything is created, export controls per persona, and the persona's picture.
import { api, seg, sendFile } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { avatar, cardText } from '../lib/persona_view.js';
import { toast } from '../lib/ui.js';
import { t, tn } from '../lib/i18n.js';

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
      formatLabel(preview),
      preview.format === 'archive' ? tn('settings.cards.conversations', preview.sessions || 0) : '',
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

/** The picture controls of the persona form. Editing uploads at once; a new persona holds the
 * chosen file (shown from a `data:` URL, which the CSP allows) until it exists, then `commit`
 * sends it through the same avatar endpoint, so both are checked and re-encoded alike. */
export class AvatarControls {
  constructor({ onChange }) {
    this.onChange = onChange;
    this.persona = null;
    this.pending = null;
    this.row = byId('p-avatar-row');
    byId('p-avatar-file').addEventListener('change', (event) => this.upload(event.target));
    byId('p-avatar-remove').addEventListener('click', () => this.remove());
  }

  show(persona) {
    this.persona = persona;
    this.pending = null;
    this.row.hidden = false;
    this.draw(persona);
  }

  draw(shown) {
    byId('p-avatar-view').replaceChildren(avatar(shown, 40));
    byId('p-avatar-remove').hidden = !shown?.avatar_url;
  }

  async upload(input) {
    const file = input.files[0];
    input.value = '';
    if (!file) return;
    if (!this.persona) {
      this.pending = file;
      this.draw({ name: byId('p-name').value, avatar_url: await dataUrl(file) });
      return;
    }
    try {
      this.show(await sendFile('PUT', `/api/personas/${seg(this.persona.id)}/avatar`, file));
      toast(t('settings.personas.picture_saved'));
      await this.onChange();
    } catch (err) {
      toast(err.message, { error: true });
    }
  }

  /** Sends the picture chosen for the persona just created; throws the server's refusal. */
  async commit(persona) {
    const file = this.pending;
    this.pending = null;
    if (file) await sendFile('PUT', `/api/personas/${seg(persona.id)}/avatar`, file);
  }

  async remove() {
    if (!this.persona) {
      this.pending = null;
      this.draw(null);
      return;
    }
    try {
      this.show(await api.del(`/api/personas/${seg(this.persona.id)}/avatar`));
      await this.onChange();
    } catch (err) {
      toast(err.message, { error: true });
    }
  }
}

function dataUrl(file) {
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.addEventListener('load', () => resolve(reader.result));
    reader.addEventListener('error', () => resolve(null));
    reader.readAsDataURL(file);
  });
}

/** What kind of file the preview came from: a card names its spec version; an archive or a Letta
 * agent file has none (their `spec_version` is null). */
function formatLabel(preview) {
  if (preview.spec_version != null) {
    return t('settings.cards.meta', { version: preview.spec_version, format: preview.format });
  }
  return preview.format === 'af' ? t('settings.cards.meta_af') : t('settings.cards.meta_archive');
}
