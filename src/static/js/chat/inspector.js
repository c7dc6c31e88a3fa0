// The prompt inspector: the request a reply was generated from, in sections with token counts
// (the provider's or a labelled estimate), the cached prefix marked, and the model, provider and
// usage the reply reported (GET /api/sessions/<sid>/messages/<mid>/prompt). And the context
// meter under the message box: how full the model's window was with the last request.
import { api, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { LOCALE, t } from '../lib/i18n.js';

const number = (n) => Number(n).toLocaleString(LOCALE);

/** "1,234 tokens", or "≈ 1,234 tokens (estimate)". */
function tokens(count, countedBy) {
  return countedBy === 'estimate'
    ? t('chat.prompt.tokens_estimate', { count: number(count) })
    : t('chat.prompt.tokens', { count: number(count) });
}

function sectionTitle(section) {
  if (section.kind === 'cortex') return section.label;
  return t(`chat.prompt.kind.${section.kind}`);
}

/** The dialog; `open(sessionId, messageId, focus)` shows a reply's prompt (`focus` 'cortex'
 * opens the cortex files and moves there). */
export class PromptInspector {
  constructor() {
    this.dialog = byId('prompt-dialog');
    this.body = byId('prompt-body');
    this.summary = byId('prompt-summary');
    this.request = 0;
  }

  async open(sessionId, messageId, focus = null) {
    const request = ++this.request;
    this.summary.replaceChildren();
    this.body.replaceChildren(h('p', { class: 'muted', text: t('chat.prompt.loading') }));
    if (!this.dialog.open) this.dialog.showModal();
    let data;
    try {
      data = await api.get(`/api/sessions/${seg(sessionId)}/messages/${seg(String(messageId))}/prompt`);
    } catch (err) {
      if (request === this.request) this.body.replaceChildren(h('p', { class: 'form-error', role: 'alert', text: err.message }));
      return;
    }
    if (request !== this.request || !this.dialog.open) return;
    this.render(data, focus);
  }

  render(data, focus) {
    this.dialog.dataset.recorded = data.recorded ? 'yes' : 'no';
    if (!data.recorded) {
      this.body.replaceChildren(h('p', { class: 'prompt-missing', text: t(data.status === 'streaming' ? 'chat.prompt.streaming' : 'chat.prompt.not_recorded') }));
      return;
    }
    this.summary.replaceChildren(...summaryRows(data));
    const sections = data.sections.map((section) => sectionEl(section, focus));
    this.body.replaceChildren(h('p', { class: 'small muted prompt-legend' },
      h('span', { class: 'badge badge-cached', text: t('chat.prompt.cached') }), ' ', t('chat.prompt.cached_hint')),
    ...sections);
    const target = focus === 'cortex' ? this.body.querySelector('.prompt-section[data-kind="cortex"] summary') : null;
    if (target) {
      target.focus();
      target.scrollIntoView({ block: 'start' });
    }
  }
}

function summaryRows(data) {
  const usage = data.usage;
  const rows = [
    [t('chat.prompt.model'), data.model],
    [t('chat.prompt.provider'), t(`chat.prompt.provider_${data.provider === 'openai_compatible' ? 'openai' : 'anthropic'}`)],
    [t('chat.prompt.total'), `${tokens(data.total.tokens, data.total.counted_by)} · ${t('chat.prompt.of_window', { window: number(data.context_window) })}`],
  ];
  if (usage) {
    rows.push([t('chat.prompt.usage'), t('chat.prompt.usage_line', {
      input: number(usage.input_tokens), output: number(usage.output_tokens),
      read: number(usage.cache_read_tokens), write: number(usage.cache_write_tokens),
    })]);
  } else {
    rows.push([t('chat.prompt.usage'), t('chat.prompt.no_usage')]);
  }
  return rows.flatMap(([label, value]) => [h('dt', { text: label }), h('dd', { text: value })]);
}

function sectionEl(section, focus) {
  const open = focus === 'cortex' && section.kind === 'cortex';
  const badges = [h('span', { class: 'prompt-tokens', text: tokens(section.tokens, section.counted_by) })];
  if (section.cached) badges.push(h('span', { class: 'badge badge-cached', text: t('chat.prompt.cached') }));
  if (section.kind === 'cortex' && Number.isInteger(section.revision)) {
    badges.push(h('span', { class: 'muted small', text: t('chat.prompt.revision', { rev: section.revision }) }));
  }
  return h('details', { class: 'prompt-section', open, dataset: { kind: section.kind, label: section.label } },
    h('summary', {}, h('span', { class: 'prompt-section-title', text: sectionTitle(section) }), ...badges),
    ...sectionContent(section));
}

function sectionContent(section) {
  if (section.kind === 'history') {
    return [h('ol', { class: 'prompt-history' }, ...section.messages.map((message) => h('li', { dataset: { role: message.role } },
      h('strong', { text: message.role === 'user' ? t('chat.prompt.role_user') : t('chat.prompt.role_assistant') }),
      h('pre', { class: 'prompt-text', tabindex: 0, text: message.text }))))];
  }
  const out = [];
  if (section.kind === 'world' && section.entries?.length) {
    out.push(h('ul', { class: 'prompt-entries' }, ...section.entries.map((entry) => h('li', { dataset: { entryId: entry.entry_id } },
      h('strong', { text: entry.name || t('chat.prompt.unnamed') }), ' ',
      h('span', { class: 'muted', text: entry.key == null ? t('chat.message.world_constant') : t('chat.message.world_key', { key: entry.key }) }),
      ' ', h('span', { class: 'muted small', text: t('chat.prompt.entry_budget', { count: number(entry.tokens ?? 0) }) })))));
  }
  out.push(h('pre', { class: 'prompt-text', tabindex: 0, text: section.text }));
  return out;
}

/** The meter under the message box; `onOpen(replyId)` opens that reply's prompt. */
export class ContextMeter {
  constructor({ onOpen }) {
    this.button = byId('context-meter');
    this.bar = byId('context-meter-bar');
    this.text = byId('context-meter-text');
    this.replyId = null;
    this.sessionId = null;
    this.request = 0;
    this.button.addEventListener('click', () => {
      if (this.replyId != null) onOpen(this.sessionId, this.replyId);
    });
  }

  /** Reads the meter of `sessionId` (none: hidden). */
  async load(sessionId) {
    const request = ++this.request;
    if (!sessionId) {
      this.button.hidden = true;
      return;
    }
    let data;
    try {
      data = await api.get(`/api/sessions/${seg(sessionId)}/context`);
    } catch {
      return; // the meter is a hint: a failed read leaves it as it was
    }
    if (request !== this.request) return;
    this.sessionId = sessionId;
    this.replyId = data.reply_id;
    this.button.hidden = data.used == null;
    if (data.used == null) return;
    const share = Math.min(1, data.used / data.window);
    this.bar.max = data.window;
    this.bar.value = Math.min(data.used, data.window);
    this.bar.high = Math.round(data.window * 0.8);
    this.bar.optimum = 0;
    this.button.dataset.level = share >= 0.9 ? 'full' : share >= 0.7 ? 'high' : 'ok';
    const key = data.counted_by === 'estimate' ? 'chat.prompt.meter_estimate' : 'chat.prompt.meter';
    this.text.textContent = t(key, { used: number(data.used), window: number(data.window), percent: Math.round(share * 100) });
    this.button.title = t('chat.prompt.meter_title');
  }
}
