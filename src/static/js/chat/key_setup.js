// First start: without an API key the chat asks for one; the server checks it before storing it.
import { request } from '../lib/api.js';
import { enteredKey, showKeyRefused } from '../lib/api_key.js';
import { byId } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

/** The welcome card that collects and validates the API key. */
export class KeySetup {
  constructor({ onConfigured }) {
    this.root = byId('key-setup');
    this.form = byId('key-form');
    this.input = byId('key-input');
    this.error = byId('key-error');
    this.submit = byId('key-submit');
    this.onConfigured = onConfigured;
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
  }

  /** Shows the card (and focuses the key field) or hides it. */
  show(visible) {
    this.root.hidden = !visible;
    if (visible) this.input.focus();
  }

  async save() {
    const key = enteredKey(this.input, this.error);
    if (!key) return;
    this.submit.disabled = true;
    this.submit.textContent = t('common.api_key.checking');
    this.input.setAttribute('aria-invalid', 'false');
    try {
      const { data } = await request('PUT', '/api/settings/api-key', { body: { api_key: key } });
      this.input.value = '';
      this.show(false);
      this.onConfigured(data.api_key || data);
    } catch (err) {
      showKeyRefused(this.input, this.error, err);
      this.input.select();
    } finally {
      this.submit.disabled = false;
      this.submit.textContent = t('common.api_key.save');
    }
  }
}
