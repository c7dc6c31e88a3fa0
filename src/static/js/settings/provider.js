// The model provider card: Anthropic or an OpenAI-compatible endpoint, presets for the common
// servers, the context window, and "Test connection" (models, tool calls, window). The models
// it finds fill the model field's suggestions; any id can still be typed in.
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
    byId('provider-presets').querySelector('.preset-row').replaceChildren(...PRESETS.map(
      (preset) => h('button', { type: 'button', class: 'btn btn-small', 'data-preset': preset.id,
        text: preset.label, onClick: () => this.usePreset(preset) })));
    this.select.addEventListener('change', () => this.showProvider(this.select.value));
    this.testButton.addEventListener('click', () => this.test());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    this.suggest(CLAUDE_MODELS);
  }

  load(settings) {
    this.select.value = settings.provider || 'anthropic';
    this.baseUrl.value = settings.base_url || '';
    this.window.value = settings.context_window ?? '';
    this.showProvider(this.select.value, false);
  }

  showProvider(provider, announce = true) {
    this.baseUrl.placeholder = provider === 'openai_compatible' ? 'http://127.0.0.1:11434/v1'
      : t('settings.provider.default_url');
    if (provider === 'anthropic') this.suggest(CLAUDE_MODELS);
    if (announce) this.report.hidden = true;
    this.onProvider(provider);
  }

  usePreset(preset) {
    this.select.value = 'openai_compatible';
    this.baseUrl.value = preset.url;
    this.showProvider('openai_compatible');
    this.baseUrl.focus();
  }

  suggest(models) {
    byId('model-options').replaceChildren(...models.map((model) => h('option', { value: model })));
  }

  body() {
    const raw = this.window.value.trim();
    return { provider: this.select.value, base_url: this.baseUrl.value.trim() || null,
      context_window: raw ? Number(raw) : null };
  }

  async save() {
    this.error.textContent = '';
    try {
      const settings = await api.put('/api/settings', this.body());
      byId('set-model').value = settings.model || '';
      byId('provider-saved').textContent = t('settings.provider.saved');
      setTimeout(() => { byId('provider-saved').textContent = ''; }, 2500);
    } catch (err) {
      const field = err.data?.error?.field;
      const el = { base_url: this.baseUrl, context_window: this.window }[field] || null;
      showProblem(this.error, el, errorInWords(err, this.form));
    }
  }

  async test() {
    const { provider, base_url: baseUrl } = this.body();
    const body = { provider };
    if (baseUrl) body.base_url = baseUrl;
    const model = byId('set-model').value.trim();
    if (model && !(provider === 'openai_compatible' && model.startsWith('claude-'))) body.model = model;
    this.testButton.disabled = true;
    this.testButton.textContent = t('settings.provider.testing');
    this.report.hidden = false;
    this.report.replaceChildren(h('p', { text: t('settings.provider.asking') }));
    try {
      const { data } = await request('POST', '/api/settings/test-connection', { body });
      this.showReport(data);
    } catch (err) {
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
