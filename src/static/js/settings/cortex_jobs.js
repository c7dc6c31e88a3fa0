// Cortex settings (enabled, frequency, idle minutes) and "update now" with live progress: start
// the job, then poll it until it is done or failed.
import { api, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { toast } from '../lib/ui.js';
import { errorMessage, t } from '../lib/i18n.js';

const POLL_MS = 700;
const LABELS = { queued: 'settings.jobs.queued', running: 'settings.jobs.running' };

/** The memory settings card; `onFinished(job)` runs when an update ends, `onReview(id)` opens
 * the proposal a review-mode update left waiting. */
export class CortexJobs {
  constructor({ onFinished, onReview }) {
    this.onFinished = onFinished;
    this.onReview = onReview;
    this.form = byId('cortex-settings');
    this.status = byId('cx-status');
    this.button = byId('cortex-update');
    this.personaId = null;
    this.jobId = null;
    this.timer = null;
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    this.button.addEventListener('click', () => this.start());
  }

  async load() {
    const settings = await api.get('/api/cortex/settings');
    byId('cx-enabled').checked = Boolean(settings.enabled);
    byId('cx-frequency').value = settings.frequency;
    byId('cx-idle').value = settings.idle_minutes;
  }

  setPersona(personaId) {
    if (this.personaId !== personaId) this.stop();
    this.personaId = personaId;
  }

  async save() {
    byId('cx-error').textContent = '';
    const problem = limitProblem(this.form);
    if (problem) {
      showProblem(byId('cx-error'), problem.el, problem.message);
      return;
    }
    try {
      const saved = await api.put('/api/cortex/settings', {
        enabled: byId('cx-enabled').checked,
        frequency: byId('cx-frequency').value,
        idle_minutes: Number(byId('cx-idle').value),
      });
      byId('cx-idle').value = saved.idle_minutes;
      toast(t('settings.memory.saved_all'));
    } catch (err) {
      byId('cx-error').textContent = errorInWords(err, this.form);
    }
  }

  async start() {
    this.button.disabled = true;
    try {
      const started = await api.post(`/api/personas/${seg(this.personaId)}/cortex/update`, {});
      const job = started.job || { id: started.job_id, status: started.status };
      this.follow(job);
    } catch (err) {
      this.button.disabled = false;
      this.setStatus('', err.message, 'failed');
    }
  }

  follow(job) {
    this.stop();
    this.jobId = job.id;
    this.show(job);
    this.timer = setInterval(() => this.poll(), POLL_MS);
  }

  async poll() {
    const jobId = this.jobId;
    try {
      const job = await api.get(`/api/cortex/jobs/${seg(jobId)}`);
      if (jobId === this.jobId) this.show(job);
    } catch (err) {
      this.stop();
      this.setStatus('', err.message, 'failed');
    }
  }

  show(job) {
    if (job.status === 'queued' || job.status === 'running') {
      this.setStatus('spinner', t(LABELS[job.status]), 'running');
      return;
    }
    this.stop();
    if (job.status === 'done' && job.proposal_id) {
      this.setStatus('', t('settings.jobs.proposed'), 'proposed');
      this.status.append(' ', h('button', { type: 'button', class: 'btn btn-small', id: 'cx-open-proposal',
        text: t('settings.jobs.open_proposal'), onClick: () => this.onReview(job.proposal_id) }));
    } else if (job.status === 'done') {
      const files = job.files || [];
      this.setStatus('', files.length ? t('settings.jobs.updated', { files: files.join(', ') })
        : t('settings.jobs.checked'), 'done');
      if (job.summary) toast(job.summary);
    } else {
      const reason = errorMessage(job.error, job.error_message || job.error || t('settings.jobs.unknown_error'));
      this.setStatus('', t('settings.jobs.failed', { reason: reason.replace(/\.$/, '') }), 'failed');
    }
    this.onFinished(job);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.jobId = null;
    this.button.disabled = false;
  }

  setStatus(kind, text, state) {
    this.status.dataset.state = state;
    this.status.replaceChildren(kind === 'spinner' ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : '',
      h('span', { text }));
    if (state === 'running') this.button.disabled = true;
  }
}
