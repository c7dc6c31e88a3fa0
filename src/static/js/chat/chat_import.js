// Chat import: pick a SillyTavern .jsonl (or a conversation exported as JSON), see what it holds
// (the server's preview stores nothing), import it into the open persona, then open it.
import { seg, sendFile } from '../lib/api.js';
import { byId } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

/** The import dialog of the chat page; `onImported(session)` opens the new conversation. */
export class ChatImport {
  constructor({ personaId, onImported }) {
    this.personaId = personaId;
    this.onImported = onImported;
    this.dialog = byId('chat-import-dialog');
    this.input = byId('chat-import-file');
    this.summary = byId('chat-import-summary');
    this.error = byId('chat-import-error');
    this.go = byId('chat-import-go');
    this.file = null;
    byId('chat-import-open').addEventListener('click', () => this.open());
    this.input.addEventListener('change', () => this.choose(this.input.files[0]));
    this.go.addEventListener('click', () => this.run());
  }

  open() {
    if (!this.personaId()) return;
    this.reset();
    this.dialog.showModal();
    this.input.focus();
  }

  reset() {
    this.file = null;
    this.input.value = '';
    this.error.textContent = '';
    this.summary.hidden = true;
    this.summary.textContent = '';
    this.go.disabled = true;
  }

  url(preview) {
    return `/api/personas/${seg(this.personaId())}/chats/import${preview ? '?preview=1' : ''}`;
  }

  async choose(file) {
    this.file = null;
    this.go.disabled = true;
    this.error.textContent = '';
    this.summary.hidden = true;
    if (!file) return;
    try {
      this.show(await sendFile('POST', this.url(true), file));
      this.file = file;
      this.go.disabled = false;
    } catch (err) {
      this.error.textContent = err.message;
    }
  }

  show(preview) {
    const parts = [
      t('chat.import.summary', {
        messages: preview.messages, alternatives: preview.alternatives,
        first: preview.first_date.slice(0, 10), last: preview.last_date.slice(0, 10),
      }),
    ];
    if (preview.names.length) parts.push(t('chat.import.names', { names: preview.names.join(', ') }));
    if (preview.skipped_system) parts.push(t('chat.import.skipped', { count: preview.skipped_system }));
    this.summary.textContent = parts.join(' ');
    this.summary.hidden = false;
  }

  async run() {
    if (!this.file) return;
    this.go.disabled = true;
    try {
      const session = await sendFile('POST', this.url(false), this.file);
      this.dialog.close();
      await this.onImported(session);
    } catch (err) {
      this.error.textContent = err.message;
      this.go.disabled = false;
    }
  }
}
