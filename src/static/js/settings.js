// The settings page: general settings, personas, and the cortex editor with its history and
// update controls. `?persona=&file=&view=history` opens a file's latest change directly, and
// `&rev=` one revision of it (a reply's "memory used" links here).
import { byId, h } from './lib/dom.js';
import { applyLimits } from './lib/forms.js';
import { confirmAction, toast } from './lib/ui.js';
import { CortexEditor, FILES } from './settings/cortex_editor.js';
import { CortexHistory } from './settings/cortex_history.js';
import { CortexJobs } from './settings/cortex_jobs.js';
import { CortexPins } from './settings/cortex_pins.js';
import { CortexProposals } from './settings/cortex_proposals.js';
import { CortexSleep } from './settings/cortex_sleep.js';
import { AboutYouSettings } from './settings/about_you.js';
import { GeneralSettings } from './settings/general.js';
import { PersonaSettings } from './settings/personas.js';
import { t } from './lib/i18n.js';

const params = new URLSearchParams(window.location.search);
// A chat's memory note links to one revision's diff (`?rev=`); shown once, on the first load.
let linkedRev = /^[0-9]{1,15}$/.test(params.get('rev') || '') ? Number(params.get('rev')) : null;
const personaSelect = byId('cortex-persona');
let personaId = null;

// Other tabs of this browser hear about every write at once; other browsers are caught when the
// page becomes visible again (and by If-Match on save in any case).
const channel = 'BroadcastChannel' in window ? new BroadcastChannel('persona-cortex') : null;

function announce(filename) {
  channel?.postMessage({ personaId, filename });
}

const history = new CortexHistory({
  onRestored: (response) => {
    editor.applyRestored(response);
    announce(editor.filename);
  },
  isDirty: (filename) => editor.isDirty(filename),
});
const editor = new CortexEditor({
  onSaved: (filename) => {
    announce(filename);
    return history.load(personaId, filename, 'latest').catch(report);
  },
  onIncoming: (filename) => history.load(personaId, filename, 'latest').catch(report),
  onSelect: (filename) => {
    pins.check();
    sleep.setFile(filename).catch(report);
    const select = linkedRev ?? 'latest';
    linkedRev = null;
    return history.load(personaId, filename, select).catch(report);
  },
});
const pins = new CortexPins();
async function fileChanged(filename) {
  announce(filename);
  await editor.refresh(filename);
  pins.check();
  if (filename === editor.filename) await history.load(personaId, filename, 'latest');
}
const proposals = new CortexProposals({ onApplied: fileChanged });
const sleep = new CortexSleep({
  onQueued: (job) => jobs.follow(job),
  onRestored: fileChanged,
});

async function refreshFiles(names) {
  await Promise.all(names.map((name) => editor.refresh(name)));
  await history.load(personaId, editor.filename, 'latest');
}

channel?.addEventListener('message', ({ data }) => {
  if (data?.personaId === personaId && FILES.includes(data.filename)) refreshFiles([data.filename]).catch(report);
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && personaId) refreshFiles(FILES).catch(report);
});
async function refreshAfter(job) {
  await refreshFiles((job.files || []).filter((name) => FILES.includes(name)));
  await Promise.all([proposals.load(), sleep.status(), sleep.loadArchive()]);
}

const jobs = new CortexJobs({
  // A refresh that fails (the server gone meanwhile) is told, not left as an unhandled rejection.
  onFinished: (job) => refreshAfter(job).catch(report),
  onReview: (proposalId) => proposals.reveal(proposalId).catch(report),
});
const general = new GeneralSettings();
// The name under General is the default user persona's name (docs/about-you.md): keep it shown.
const aboutYou = new AboutYouSettings({ onChange: (items) => {
  const chosen = items.find((item) => item.is_default);
  if (chosen) byId('set-user-name').value = chosen.name;
} });
const personas = new PersonaSettings({ onChange: (list) => personasChanged(list) });

function report(err) {
  toast(err.message, { error: true });
}

function personasChanged(list) {
  const wanted = list.some((p) => p.id === personaId) ? personaId
    : (list.find((p) => p.id === params.get('persona')) || list[0] || {}).id;
  personaSelect.replaceChildren(...list.map((p) => h('option', { value: p.id, text: p.name })));
  if (wanted) personaSelect.value = wanted;
  if (wanted && wanted !== personaId) return openPersona(wanted, params.get('file') || undefined).catch(report);
  return null;
}

async function openPersona(id, filename) {
  personaId = id;
  personaSelect.value = id;
  jobs.setPersona(id);
  await editor.load(id, filename);
  pins.check();
  await Promise.all([proposals.setPersona(id), sleep.setPersona(id)]);
}

personaSelect.addEventListener('change', async () => {
  const next = personaSelect.value;
  if (editor.anyDirty()) {
    const ok = await confirmAction(t('settings.memory.switch_text'),
      { title: t('settings.memory.switch_title'), confirm: t('settings.memory.switch_confirm') });
    if (!ok) {
      personaSelect.value = personaId;
      return;
    }
  }
  openPersona(next).catch(report);
});

async function start() {
  if (params.get('view') === 'history') history.revealDiff();
  await Promise.all([general.load(), aboutYou.load(), personas.load(), jobs.load(), applyLimits()]);
  if (params.get('view') !== 'history' && window.location.hash) {
    document.getElementById(window.location.hash.slice(1))?.scrollIntoView({ block: 'start' });
  }
}

start().catch(report).finally(() => { document.body.dataset.ready = 'true'; });
