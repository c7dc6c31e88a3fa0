// General settings: the provider (provider.js), the API key of the current provider (set,
// replace, remove; only its last 4 characters are shown) and the model and conversation settings.
import { api, request } from '../lib/api.js';
import { enteredKey, showKeyRefused } from '../lib/api_key.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, showProblem, withinLimits } from '../lib/forms.js';
import { setPersonName } from '../lib/persona_view.js';
import { currentTheme, setTheme } from '../lib/theme.js';
import { confirmedDelete, toast } from '../lib/ui.js';
import { LANG, t } from '../lib/i18n.js';
import { ProviderSettings } from './provider.js';

const KEY_TEXT = {
  anthropic: { heading: 'common.api_key.label', env: 'ANTHROPIC_API_KEY', placeholder: 'settings.key.anthropic_placeholder',
    missing: 'settings.key.not_set_hint' },
  openai_compatible: { heading: 'settings.key.endpoint_heading', env: 'OPENAI_API_KEY',
    placeholder: 'settings.key.endpoint_placeholder',
    missing: 'settings.key.endpoint_missing' },
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
    this.providerCard = new ProviderSettings({
      onProvider: (provider, refresh) => this.useProvider(provider, refresh) });
    this.keyForm.addEventListener('submit', (event) => { event.preventDefault(); this.saveKey(); });
    this.keyRemove.addEventListener('click', () => this.removeKey());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    const theme = byId('set-theme');
    theme.value = currentTheme();
    theme.addEventListener('change', () => setTheme(theme.value));
  }

  async load() {
    const settings = await api.get('/api/settings');
    setPersonName(settings.user_name);
    this.providerCard.load(settings);
    this.showKey(settings.api_key || { configured: false });
    for (const [name, id] of Object.entries(FIELDS)) {
      const value = settings[name];
      byId(id).value = value === null || value === undefined ? '' : String(value);
    }
    // Not chosen yet: the page is in the browser's language, and saving would keep it.
    const language = byId('set-language');
    if (language.dataset.chosen === 'false') language.value = LANG;
  }

  /** Shows the key card of `provider` (refresh: read its status again, e.g. after a save). */
  async useProvider(provider, refresh = false) {
    if (provider === this.provider && !refresh) return;
    this.provider = provider;
    const text = KEY_TEXT[provider];
    byId('key-heading').textContent = t(text.heading);
    byId('key-help').hidden = provider !== 'anthropic';
    this.keyInput.placeholder = t(text.placeholder);
    try {
      const settings = await api.get('/api/settings');
      this.showKey(settings.providers?.[provider]?.api_key || { configured: false });
    } catch {
      // the status line keeps its last state
    }
  }

  showKey(status) {
    const text = KEY_TEXT[this.provider];
    const line = byId('key-status');
    if (status.configured) {
      const ending = status.last4 ? t('settings.key.ends_in', { last4: status.last4 }) : t('settings.key.configured_lower');
      const source = status.source === 'environment' ? ` ${t('settings.key.from_env', { env: text.env })}` : '';
      line.replaceChildren(h('span', { class: 'badge badge-ok', text: t('settings.key.configured') }),
        h('span', { text: t('settings.key.status', { ending, source }) }));
    } else {
      line.replaceChildren(h('span', { class: 'badge badge-missing', text: t('settings.key.not_set') }),
        h('span', { text: t(text.missing) }));
    }
    byId('key-label').textContent = status.configured ? t('settings.key.replace_label') : t('settings.key.label');
    this.keySubmit.textContent = status.configured ? t('settings.key.replace') : t('common.api_key.save');
    this.keyRemove.hidden = !(status.configured && status.source === 'settings');
  }

  async saveKey() {
    const key = enteredKey(this.keyInput, this.keyError);
    if (!key) return;
    const label = this.keySubmit.textContent;
    this.keySubmit.disabled = true;
    this.keySubmit.textContent = t('common.api_key.checking');
    try {
      const { data } = await request('PUT', '/api/settings/api-key',
        { body: { api_key: key, provider: this.provider } });
      this.keyInput.value = '';
      this.keyInput.removeAttribute('aria-invalid');
      this.showKey(data.api_key || data);
      toast(t('settings.key.saved'));
    } catch (err) {
      showKeyRefused(this.keyInput, this.keyError, err);
      this.keySubmit.textContent = label;
    } finally {
      this.keySubmit.disabled = false;
    }
  }

  async removeKey() {
    const data = await confirmedDelete(t('settings.key.remove_text'),
      { title: t('settings.key.remove_title'), confirm: t('settings.key.remove_confirm') },
      `/api/settings/api-key?provider=${this.provider}`);
    if (!data) return;
    this.showKey(data.api_key || data);
    toast(t('settings.key.removed'));
  }

  async save() {
    if (!withinLimits(this.form, this.formError)) return;
    const body = {};
    for (const [name, id] of Object.entries(FIELDS)) {
      const raw = byId(id).value.trim();
      if (name === 'effort') body[name] = raw || null;
      else body[name] = NUMBERS.has(name) ? Number(raw) : raw;
    }
    // The model field shows the chosen provider's model; until that provider is saved, it is
    // not the model of the provider in use, so it is not sent with the other settings.
    if (this.providerCard.select.value !== this.providerCard.saved) delete body.model;
    try {
      await api.put('/api/settings', body);
      setPersonName(body.user_name);
      if (body.language !== LANG) {
        window.location.reload();  // the interface follows the new language at once
        return;
      }
      byId('app-saved').textContent = t('common.saved');
      setTimeout(() => { byId('app-saved').textContent = ''; }, 2500);
    } catch (err) {
      const field = err.data?.error?.field;
      showProblem(this.formError, FIELDS[field] ? byId(FIELDS[field]) : null, errorInWords(err, this.form));
    }
  }
}
