// The memory indicator in the chat header: progress towards the persona's next cortex update
// (from `done.cortex`), a live state while an update runs (the WebSocket `cortex` event, with job
// polling as a fallback), and afterwards a link to the diff of what changed.
import { api, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { t, tn } from '../lib/i18n.js';

const POLL_MS = 1000;
const FILE_KEYS = { 'memory.md': 'memory', 'soul.md': 'soul', 'relationship.md': 'relationship' };

/** Keeps the header's memory indicator in step with the persona's cortex. */
export class MemoryIndicator {
  constructor() {
    this.root = byId('memory');
    this.link = byId('memory-link');
    this.label = byId('memory-label');
    this.ring = this.root.querySelector('.memory-ring');
    this.personaId = null;
    this.jobId = null;
    this.timer = null;
  }

  /** Resets the indicator for another persona. */
  setPersona(personaId) {
    if (personaId === this.personaId) return;
    this.personaId = personaId;
    this.stopPolling();
    this.jobId = null;
    this.setProgress(null);
    this.render('idle', t('chat.memory.label'), t('chat.memory.title_idle', { explain: t('chat.memory.explain') }));
  }

  /** Loads the persona's progress before any reply (`GET …/cortex/status`; optional). */
  async load() {
    const personaId = this.personaId;
    try {
      const status = await api.get(`/api/personas/${seg(personaId)}/cortex/status`);
      if (personaId === this.personaId) {
        this.update(status);
        this.showProposals(status.proposals_pending || 0);
      }
    } catch {
      // older servers have no status endpoint: the first reply brings the progress
    }
  }

  /** Applies a `done` event's `cortex` object `{triggered, job_id, progress, frequency, …}`. */
  update(cortex) {
    if (!cortex) return;
    if (cortex.enabled === false) {
      this.stopPolling();
      this.jobId = null;
      this.setProgress(null);
      this.render('off', t('chat.memory.off'), t('chat.memory.off_title'));
      return;
    }
    if (cortex.job_id && (cortex.triggered || !this.jobId)) {
      this.follow(cortex.job_id);
      return;
    }
    if (this.jobId || typeof cortex.progress !== 'number') return;
    const fraction = Math.max(0, Math.min(1, cortex.progress));
    const percent = Math.round(fraction * 100);
    const counted = typeof cortex.unprocessed === 'number' && typeof cortex.threshold === 'number'
      ? ` ${tn('chat.memory.counted', cortex.threshold, { unprocessed: cortex.unprocessed })}` : '';
    this.setProgress(fraction);
    this.render('idle', t('chat.memory.percent', { percent }),
      t('chat.memory.title_progress', { percent, counted, explain: t('chat.memory.explain') }));
  }

  /** Shows a running update and follows it until it ends. */
  follow(jobId) {
    if (this.jobId === jobId) return;
    this.stopPolling();
    this.jobId = jobId;
    this.render('running', t('chat.memory.running'), t('chat.memory.running_title'));
    this.timer = setInterval(() => this.poll(), POLL_MS);
  }

  /** Applies a WebSocket `cortex` event `{job_id, status, files}`. */
  jobEvent(event) {
    if (event.persona_id && event.persona_id !== this.personaId) return;
    if (event.status === 'queued' || event.status === 'running') {
      this.follow(event.job_id);
    } else {
      this.finish(event);
    }
  }

  async poll() {
    const jobId = this.jobId;
    if (!jobId) return;
    try {
      const job = await api.get(`/api/cortex/jobs/${seg(jobId)}`);
      if (this.jobId === jobId && (job.status === 'done' || job.status === 'failed')) {
        this.finish({ ...job, job_id: job.id });
      }
    } catch {
      // keep polling; the WebSocket event may still arrive
    }
  }

  finish(job) {
    if (job.job_id && this.jobId && job.job_id !== this.jobId) return;
    this.stopPolling();
    this.jobId = null;
    this.setProgress(0);
    if (job.status === 'failed' && job.error === 'tools_unsupported') {
      this.render('failed', t('chat.memory.tools_unsupported'), t('chat.memory.tools_unsupported_title'));
      return;
    }
    if (job.status === 'failed') {
      this.render('failed', t('chat.memory.failed'),
        t('chat.memory.failed_title', { reason: job.error ? ` (${job.error})` : '' }));
      return;
    }
    this.loadProposals();
    const files = Array.isArray(job.files) ? job.files : [];
    if (files.length) this.onChanged?.(files);
    const names = files.map((file) => (FILE_KEYS[file] ? t(`chat.memory.file.${FILE_KEYS[file]}`) : file));
    if (job.reason === 'reconcile') {
      this.render('reconciled', names.length ? t('chat.memory.reconciled') : t('chat.memory.reconciled_none'),
        names.length ? t('chat.memory.reconciled_title', { files: names.join(', ') })
          : t('chat.memory.reconciled_none_title'), files[0]);
      return;
    }
    const text = names.length ? t('chat.memory.updated') : t('chat.memory.checked');
    this.render('updated', text, names.length ? t('chat.memory.updated_title', { files: names.join(', ') })
      : t('chat.memory.checked_title'), files[0]);
  }

  /** Refreshes only the proposal count (after a job: review mode may have made a proposal). */
  async loadProposals() {
    const personaId = this.personaId;
    try {
      const status = await api.get(`/api/personas/${seg(personaId)}/cortex/status`);
      if (personaId === this.personaId) this.showProposals(status.proposals_pending || 0);
    } catch {
      // the count is a hint; the next load brings it
    }
  }

  /** Review mode: how many proposals wait for the person, as a badge on the indicator. */
  showProposals(count) {
    let badge = this.root.querySelector('#memory-proposals');
    if (!count) {
      badge?.remove();
      return;
    }
    if (!badge) {
      badge = h('span', { id: 'memory-proposals', class: 'badge memory-proposals' });
      this.link.append(badge);
    }
    badge.textContent = t('chat.memory.to_review', { count });
    badge.title = t('chat.memory.to_review_title');
  }

  stopPolling() {
    clearInterval(this.timer);
    this.timer = null;
  }

  setProgress(fraction) {
    this.ring.style.setProperty('--progress', fraction === null ? '0' : String(fraction));
  }

  render(state, text, title, file = 'memory.md') {
    this.root.dataset.state = state;
    this.label.textContent = text;
    // The link is named by what it shows (the label, and the count to review when there is one),
    // so speech input can say it; the explanation is its description (the title).
    this.link.title = title;
    const params = new URLSearchParams();
    if (this.personaId) params.set('persona', this.personaId);
    params.set('file', file || 'memory.md');
    if (state === 'updated' || state === 'reconciled') params.set('view', 'history');
    this.link.href = `/settings?${params}#memory`;
  }
}
