// Cortex settings (enabled, frequency, idle minutes) and "update now" with live progress: start
// the job, then poll it until it is done or failed.
import { api, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { toast } from '../lib/ui.js';

const POLL_MS = 700;
const LABELS = { queued: 'Waiting to start…', running: 'Updating memory…' };

/** The memory settings card; `onFinished(job)` runs when an update ends. */
export class CortexJobs {
  constructor({ onFinished }) {
    this.onFinished = onFinished;
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
      toast('Memory settings saved for all personas');
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
      this.setStatus('spinner', LABELS[job.status], 'running');
      return;
    }
    this.stop();
    if (job.status === 'done') {
      const files = job.files || [];
      this.setStatus('', files.length ? `Memory updated: ${files.join(', ')} changed.`
        : 'Memory checked: nothing needed to change.', 'done');
      if (job.summary) toast(job.summary);
    } else {
      this.setStatus('', `The update failed: ${job.error_message || job.error || 'unknown error'}.`, 'failed');
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
