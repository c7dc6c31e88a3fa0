// "Learn from this history" for an imported conversation (docs/chat-import.md#learning-from-it):
// the dialog shows the server's estimate (windows, tokens, cost) before anything runs, starts the
// run on confirmation, then polls its progress (window k of N) and offers Cancel. The run is
// all-or-nothing on the server, so a cancel or a failure leaves the memory as it was.
import { api, seg } from '../lib/api.js';
import { byId } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

const POLL_MS = 1000;
const ACTIVE = new Set(['queued', 'running']);

/** The learn dialog of the chat page; `render(session)` shows its button on imported chats. */
export class HistoryLearn {
  constructor({ sessionId }) {
    this.sessionId = sessionId;
    this.button = byId('learn-open');
    this.dialog = byId('learn-dialog');
    this.estimateText = byId('learn-estimate');
    this.running = byId('learn-running');
    this.status = byId('learn-status');
    this.progress = byId('learn-progress');
    this.error = byId('learn-error');
    this.go = byId('learn-go');
    this.stop = byId('learn-stop');
    this.timer = null;
    this.sid = null;
    this.button.addEventListener('click', () => this.open().catch((err) => this.fail(err)));
    this.go.addEventListener('click', () => this.start().catch((err) => this.fail(err)));
    this.stop.addEventListener('click', () => this.cancel().catch((err) => this.fail(err)));
    this.dialog.addEventListener('close', () => this.halt());
  }

  render(session) {
    this.button.hidden = !(session && session.imported);
  }

  url(tail = '') {
    return `/api/sessions/${seg(this.sid)}/learn${tail}`;
  }

  async open() {
    this.sid = this.sessionId();
    if (!this.sid) return;
    this.reset();
    this.dialog.showModal();
    const { run } = (await api.get(this.url())) || {};
    if (run && ACTIVE.has(run.status)) {
      this.show(run);
      this.poll();
      return;
    }
    this.showEstimate(await api.get(this.url('/estimate')));
  }

  reset() {
    this.halt();
    this.error.textContent = '';
    this.estimateText.textContent = '';
    this.running.hidden = true;
    this.stop.hidden = true;
    this.go.hidden = false;
    this.go.disabled = true;
  }

  showEstimate(estimate) {
    if (!estimate.windows) {
      this.estimateText.textContent = t('chat.learn.nothing');
      return;
    }
    const number = new Intl.NumberFormat(document.documentElement.lang || undefined);
    const parts = [t('chat.learn.estimate', {
      messages: number.format(estimate.messages), windows: number.format(estimate.windows),
      input: number.format(estimate.input_tokens), output: number.format(estimate.output_tokens),
    })];
    const { cost } = estimate;
    if (cost.known) {
      const money = new Intl.NumberFormat(document.documentElement.lang || undefined, {
        style: 'currency', currency: cost.currency, maximumFractionDigits: 2, minimumFractionDigits: 2,
      });
      parts.push(t('chat.learn.cost', { cost: money.format(Math.max(cost.usd, 0.01)), model: cost.model }));
    } else {
      parts.push(t('chat.learn.cost_unknown', { model: cost.model }));
    }
    this.estimateText.textContent = parts.join(' ');
    this.go.disabled = false;
    this.go.focus();
  }

  async start() {
    this.go.disabled = true;
    this.error.textContent = '';
    this.show(await api.post(this.url(), {}));
    this.poll();
  }

  async cancel() {
    this.stop.disabled = true;
    this.show(await api.post(this.url('/cancel'), {}));
  }

  poll() {
    this.halt();
    this.timer = window.setTimeout(() => this.refresh().catch((err) => this.fail(err)), POLL_MS);
  }

  halt() {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
  }

  async refresh() {
    this.timer = null;
    if (!this.dialog.open) return;
    const { run } = (await api.get(this.url())) || {};
    if (!run || !this.dialog.open) return;
    this.show(run);
    if (ACTIVE.has(run.status)) this.poll();
  }

  show(run) {
    const active = ACTIVE.has(run.status);
    this.go.hidden = true;
    this.running.hidden = false;
    this.progress.max = Math.max(run.windows, 1);
    this.progress.value = run.windows_done;
    this.stop.hidden = !active;
    this.stop.disabled = run.cancel_requested;
    this.status.textContent = statusText(run);
    if (!active) {
      byId('learn-close').focus();
    } else if (document.activeElement === this.go || document.activeElement === document.body) {
      this.stop.focus();
    }
  }

  fail(err) {
    this.error.textContent = err.message;
    this.go.disabled = false;
    this.stop.disabled = false;
  }
}

function statusText(run) {
  const windows = run.windows;
  if (run.status === 'queued') return run.cancel_requested ? t('chat.learn.cancelling') : t('chat.learn.queued');
  if (run.status === 'running') {
    if (run.cancel_requested) return t('chat.learn.cancelling');
    return t('chat.learn.progress', { done: Math.min(run.windows_done + 1, windows), windows });
  }
  if (run.cancelled) return t('chat.learn.cancelled');
  if (run.status === 'failed') return t('chat.learn.failed', { message: run.error_message || run.error });
  if (run.proposal_id) return t('chat.learn.proposed', { windows });
  if (run.files.length) return t('chat.learn.done', { windows, files: run.files.join(', ') });
  return t('chat.learn.done_nothing', { windows });
}
