// General settings: the provider (provider.js), the API key of the current provider (set,
// replace, remove; only its last 4 characters are shown) and the model and conversation settings.
import { api, request } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { currentTheme, setTheme } from '../lib/theme.js';
import { confirmAction, toast } from '../lib/ui.js';
import { keyErrorMessage } from '../chat/key_setup.js';
import { ProviderSettings } from './provider.js';

const KEY_TEXT = {
  anthropic: { heading: 'Anthropic API key', env: 'ANTHROPIC_API_KEY', placeholder: 'sk-ant-…',
    missing: 'Add a key to chat. Personas and memory work without one.' },
  openai_compatible: { heading: 'Endpoint API key (optional)', env: 'OPENAI_API_KEY',
    placeholder: 'sk-… (local servers need none)',
    missing: 'Local servers need no key; hosted ones (OpenRouter, OpenAI) do.' },
};
const FIELDS = {
  model: 'set-model', effort: 'set-effort', max_tokens: 'set-max-tokens',
  context_limit: 'set-context-limit', language: 'set-language', user_name: 'set-user-name',
};
const NUMBERS = new Set(['max_tokens', 'context_limit']);

/** The API key card and the model/conversation form. */
export class GeneralSettings {
  constructor() {
    this.keyForm = byId('key-form');
    this.keyInput = byId('key-input');
    this.keyError = byId('key-error');
    this.keySubmit = byId('key-submit');
    this.keyRemove = byId('key-remove');
    this.form = byId('app-settings');
    this.formError = byId('app-error');
    this.provider = 'anthropic';
    this.providerCard = new ProviderSettings({ onProvider: (provider) => this.useProvider(provider) });
    this.keyForm.addEventListener('submit', (event) => { event.preventDefault(); this.saveKey(); });
    this.keyRemove.addEventListener('click', () => this.removeKey());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    const theme = byId('set-theme');
    theme.value = currentTheme();
    theme.addEventListener('change', () => setTheme(theme.value));
  }

  async load() {
    const settings = await api.get('/api/settings');
    this.providerCard.load(settings);
    this.showKey(settings.api_key || { configured: false });
    for (const [name, id] of Object.entries(FIELDS)) {
      const value = settings[name];
      byId(id).value = value === null || value === undefined ? '' : String(value);
    }
  }

  async useProvider(provider) {
    if (provider === this.provider) return;
    this.provider = provider;
    const text = KEY_TEXT[provider];
    byId('key-heading').textContent = text.heading;
    byId('key-help').hidden = provider !== 'anthropic';
    this.keyInput.placeholder = text.placeholder;
    try {
      const settings = await api.get('/api/settings');
      this.showKey(settings.provider === provider ? settings.api_key : { configured: false });
    } catch {
      // the status line keeps its last state
    }
  }

  showKey(status) {
    const text = KEY_TEXT[this.provider];
    const line = byId('key-status');
    if (status.configured) {
      const ending = status.last4 ? `ends in …${status.last4}` : 'configured';
      const source = status.source === 'environment' ? ` (from ${text.env})` : '';
      line.replaceChildren(h('span', { class: 'badge badge-ok', text: 'Configured' }),
        h('span', { text: `Key ${ending}${source}` }));
    } else {
      line.replaceChildren(h('span', { class: 'badge badge-missing', text: 'Not set' }),
        h('span', { text: text.missing }));
    }
    byId('key-label').textContent = status.configured ? 'Replace the key' : 'API key';
    this.keySubmit.textContent = status.configured ? 'Replace key' : 'Save key';
    this.keyRemove.hidden = !(status.configured && status.source === 'settings');
  }

  async saveKey() {
    const key = this.keyInput.value.trim();
    this.keyError.textContent = '';
    if (!key) {
      this.keyError.textContent = 'Paste your API key first.';
      this.keyInput.focus();
      return;
    }
    const label = this.keySubmit.textContent;
    this.keySubmit.disabled = true;
    this.keySubmit.textContent = 'Checking…';
    try {
      const { data } = await request('PUT', '/api/settings/api-key',
        { body: { api_key: key, provider: this.provider } });
      this.keyInput.value = '';
      this.keyInput.removeAttribute('aria-invalid');
      this.showKey(data.api_key || data);
      toast('API key saved');
    } catch (err) {
      this.keyInput.setAttribute('aria-invalid', 'true');
      this.keyError.textContent = keyErrorMessage(err);
      this.keyInput.focus();
      this.keySubmit.textContent = label;
    } finally {
      this.keySubmit.disabled = false;
    }
  }

  async removeKey() {
    const ok = await confirmAction('Chatting stops working until you add a key again.',
      { title: 'Remove the API key?', confirm: 'Remove' });
    if (!ok) return;
    try {
      const data = await api.del(`/api/settings/api-key?provider=${this.provider}`);
      this.showKey(data.api_key || data);
      toast('API key removed');
    } catch (err) {
      toast(err.message, { error: true });
    }
  }

  async save() {
    this.formError.textContent = '';
    this.form.querySelectorAll('[aria-invalid]').forEach((el) => el.removeAttribute('aria-invalid'));
    const problem = limitProblem(this.form);
    if (problem) {
      showProblem(this.formError, problem.el, problem.message);
      return;
    }
    const body = {};
    for (const [name, id] of Object.entries(FIELDS)) {
      const raw = byId(id).value.trim();
      if (name === 'effort') body[name] = raw || null;
      else body[name] = NUMBERS.has(name) ? Number(raw) : raw;
    }
    try {
      await api.put('/api/settings', body);
      byId('app-saved').textContent = 'Saved';
      setTimeout(() => { byId('app-saved').textContent = ''; }, 2500);
    } catch (err) {
      const field = err.data?.error?.field;
      showProblem(this.formError, FIELDS[field] ? byId(FIELDS[field]) : null, errorInWords(err, this.form));
    }
  }
}
