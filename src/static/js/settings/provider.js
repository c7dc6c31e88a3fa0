// The model provider card: Anthropic or an OpenAI-compatible endpoint, presets for the common
// servers, the context window, and "Test connection" (models, tool calls, window). Each provider
// remembers its own base URL, window and model (`settings.providers`): choosing one fills the
// form with its own, so nothing of the other is saved with it. The model suggestions come from
// the chosen endpoint (its /models, or what Test connection found). A saved key is sent only to
// the address it was saved for: when the server answers 409 key_bound_to_url, the card asks for
// the key of the new address (or goes on without one) and sends the request again.
import { api, request } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, showProblem } from '../lib/forms.js';
import { t } from '../lib/i18n.js';

export const PRESETS = [
  { id: 'ollama', label: 'Ollama', url: 'http://127.0.0.1:11434/v1' }, // i18n-ignore: product name
  { id: 'llamacpp', label: 'llama.cpp server', url: 'http://127.0.0.1:8080/v1' }, // i18n-ignore: product name
  { id: 'vllm', label: 'vLLM', url: 'http://127.0.0.1:8000/v1' },
  { id: 'lmstudio', label: 'LM Studio', url: 'http://127.0.0.1:1234/v1' }, // i18n-ignore: product name
  { id: 'openrouter', label: 'OpenRouter', url: 'https://openrouter.ai/api/v1' },
  { id: 'openai', label: 'OpenAI', url: 'https://api.openai.com/v1' },
];
const CLAUDE_MODELS = ['claude-sonnet-5-5', 'claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'];

/** The provider form; `onProvider(provider)` tells the key card whose key it manages. */
export class ProviderSettings {
  constructor({ onProvider }) {
    this.onProvider = onProvider;
    this.form = byId('provider-form');
    this.select = byId('set-provider');
    this.baseUrl = byId('set-base-url');
    this.window = byId('set-context-window');
    this.error = byId('provider-error');
    this.report = byId('connection-report');
    this.testButton = byId('test-connection');
    this.model = byId('set-model');
    this.keyAsk = byId('provider-key-ask');
    this.keyInput = byId('provider-key');
    this.providers = {};
    this.saved = 'anthropic';
    this.pending = null;
    byId('provider-key-use').addEventListener('click', () => this.answerKey(true));
    byId('provider-key-none').addEventListener('click', () => this.answerKey(false));
    byId('provider-presets').querySelector('.preset-row').replaceChildren(...PRESETS.map(
      (preset) => h('button', { type: 'button', class: 'btn btn-small', 'data-preset': preset.id,
        text: preset.label, onClick: () => this.usePreset(preset) })));
    this.select.addEventListener('change', () => this.showProvider(this.select.value));
    this.testButton.addEventListener('click', () => this.test());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    this.suggest(CLAUDE_MODELS);
  }

  load(settings) {
    this.providers = settings.providers || {};
    this.saved = settings.provider || 'anthropic';
    this.select.value = settings.provider || 'anthropic';
    this.baseUrl.value = settings.base_url || '';
    this.window.value = settings.context_window ?? '';
    this.showProvider(this.select.value, false);
  }

  /** Shows `provider` with what it remembers (announce: the person chose it just now). */
  showProvider(provider, announce = true) {
    this.baseUrl.placeholder = provider === 'openai_compatible' ? 'http://127.0.0.1:11434/v1'
      : t('settings.provider.default_url');
    const own = this.providers[provider];
    if (announce && own) {
      this.baseUrl.value = own.base_url || '';
      this.window.value = own.context_window ?? '';
      this.model.value = own.model || '';
    }
    if (announce) this.report.hidden = true;
    this.hideKeyAsk();
    this.suggest(provider === 'anthropic' ? CLAUDE_MODELS : []);
    this.loadModels(provider);
    this.onProvider(provider);
  }

  /** The chosen endpoint's own model list, when it has one (else the suggestions stay). */
  async loadModels(provider) {
    try {
      const data = await api.get(`/api/settings/models?provider=${provider}`);
      if (data.models?.length && this.select.value === provider) this.suggest(data.models);
    } catch {
      // suggestions are a convenience: the field takes any model id
    }
  }

  usePreset(preset) {
    if (this.select.value !== 'openai_compatible') {
      this.select.value = 'openai_compatible';
      this.showProvider('openai_compatible');
    }
    this.baseUrl.value = preset.url;
    this.baseUrl.focus();
  }

  suggest(models) {
    byId('model-options').replaceChildren(...models.map((model) => h('option', { value: model })));
  }

  body() {
    const raw = this.window.value.trim();
    const body = { provider: this.select.value, base_url: this.baseUrl.value.trim() || null,
      context_window: raw ? Number(raw) : null };
    const model = this.model.value.trim();
    if (model) body.model = model;
    return body;
  }

  /** Asks for the key of a new address; `retry(key)` sends the request again with it. */
  askKey(retry) {
    this.pending = retry;
    this.keyInput.value = '';
    this.keyAsk.hidden = false;
    this.keyInput.focus();
  }

  hideKeyAsk() {
    this.pending = null;
    this.keyInput.value = '';
    this.keyAsk.hidden = true;
  }

  answerKey(withKey) {
    const retry = this.pending;
    const key = withKey ? this.keyInput.value.trim() : null;
    if (withKey && !key) {
      this.keyInput.focus();
      return;
    }
    this.hideKeyAsk();
    if (retry) retry(key);
  }

  async save(extra = {}) {
    this.error.textContent = '';
    try {
      const settings = await api.put('/api/settings', { ...this.body(), ...extra });
      this.providers = settings.providers || this.providers;
      this.saved = settings.provider;
      this.model.value = settings.model || '';
      this.onProvider(settings.provider, true);
      byId('provider-saved').textContent = t('settings.provider.saved');
      setTimeout(() => { byId('provider-saved').textContent = ''; }, 2500);
    } catch (err) {
      if (err.data?.error?.code === 'key_bound_to_url') {
        this.askKey((key) => this.save({ api_key: key }));
        return;
      }
      const field = err.data?.error?.field;
      const el = { base_url: this.baseUrl, context_window: this.window, model: this.model }[field] || null;
      showProblem(this.error, el, errorInWords(err, this.form));
    }
  }

  async test(extra = {}) {
    const { provider, base_url: baseUrl, model } = this.body();
    const body = { provider, ...extra };
    if (baseUrl) body.base_url = baseUrl;
    if (model) body.model = model;
    this.testButton.disabled = true;
    this.testButton.textContent = t('settings.provider.testing');
    this.report.hidden = false;
    this.report.replaceChildren(h('p', { text: t('settings.provider.asking') }));
    try {
      const { data } = await request('POST', '/api/settings/test-connection', { body });
      this.showReport(data);
    } catch (err) {
      if (err.data?.error?.code === 'key_bound_to_url') {
        this.report.hidden = true;
        this.askKey((key) => this.test({ api_key: key }));
        return;
      }
      this.report.replaceChildren(h('p', { class: 'form-error', text: errorInWords(err, this.form) }));
    } finally {
      this.testButton.disabled = false;
      this.testButton.textContent = t('settings.provider.test');
    }
  }

  showReport(report) {
    const tools = report.tools || {};
    const lines = [
      line(t('settings.provider.report.reachable'), yesNo(report.reachable), report.reachable),
      line(t('settings.provider.report.models'), report.models.length
        ? t('settings.provider.report.models_found', { count: report.models.length })
        : t('settings.provider.report.models_none'), report.models.length > 0),
      line(t('settings.provider.report.tools'), t('settings.provider.report.tools_value',
        { plain: yesNo(tools.non_streaming), streaming: yesNo(tools.streaming) }), tools.non_streaming),
      line(t('settings.provider.report.window'), report.context_window
        ? t('settings.provider.report.window_tokens', { tokens: report.context_window })
        : t('settings.provider.report.window_unknown'), Boolean(report.context_window)),
    ];
    if (report.reachable && !tools.non_streaming) {
      lines.push(h('p', { class: 'memory-warning', text: t('settings.provider.report.no_tools') }));
    }
    if (report.error) lines.push(h('p', { class: 'form-error', text: report.error.message }));
    if (report.models.length) this.suggest(report.models);
    if (!this.model.value.trim() && report.model) this.model.value = report.model;  // what was tested
    this.report.replaceChildren(...lines);
  }
}

function yesNo(value) {
  return value ? t('common.yes') : t('common.no');
}

function line(label, value, good) {
  return h('p', { class: good ? 'report-ok' : 'report-missing' },
    h('span', { class: `badge ${good ? 'badge-ok' : 'badge-missing'}`, text: good ? 'OK' : '–' }),
    ` ${label}: ${value}`);
}
