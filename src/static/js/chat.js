// The chat page: wires the sidebar, the conversation, the composer, the memory indicator and the
// first-run key setup. The URL (?persona=&session=) names what is open, so reloads keep it, and
// so does signing in again: the draft in the message box waits in sessionStorage meanwhile.
import { api, listOf, seg } from './lib/api.js';
import { beforeSignIn } from './lib/auth.js';
import { byId } from './lib/dom.js';
import { avatar, setPersonName } from './lib/persona_view.js';
import { confirmedDelete, toast } from './lib/ui.js';
import { Composer } from './chat/composer.js';
import { Conversation } from './chat/conversation.js';
import { ContextMeter, PromptInspector } from './chat/inspector.js';
import { KeySetup } from './chat/key_setup.js';
import { MemoryIndicator } from './chat/memory.js';
import { Sidebar, sessionTitle } from './chat/sidebar.js';
import { ChatSocket } from './chat/socket.js';
import { ChatImport } from './chat/chat_import.js';
import { HistoryLearn } from './chat/history_learn.js';
import { UserPersonaPicker } from './chat/user_persona.js';
import { ConversationSearch, revealMessage, watchScroll } from './chat/search.js';
import { applyLimits } from './lib/forms.js';
import { t } from './lib/i18n.js';

const LAST_PERSONA = 'persona-cortex:persona';
/** Shows a failed step of an event handler to the person (never an uncaught rejection). */
const report = (err) => toast(err.message, { error: true });
const DRAFT = 'persona-cortex:draft:';

const state = { personas: [], personaId: null, sessions: [], sessionId: null };
const socket = new ChatSocket();
const memory = new MemoryIndicator();
const sidebar = new Sidebar({
  selectPersona: (id) => selectPersona(id).catch(report),
  selectSession: (id) => selectSession(id).catch(report),
  newSession: () => newSession(),
  renameSession: (session, title) => renameSession(session, title),
  deleteSession: (session) => deleteSession(session),
  refreshSessions: () => renderSessions(),
});
const composer = new Composer({
  onSend: (text) => conversation.send(text),
  onStop: () => conversation.stop(),
});
const keySetup = new KeySetup({
  onConfigured: () => {
    composer.setLocked(false);
    toast(t('chat.key_setup.saved'));
    composer.focus();
  },
});
const inspector = new PromptInspector();
const meter = new ContextMeter({ onOpen: (sessionId, replyId) => inspector.open(sessionId, replyId) });
const conversation = new Conversation({
  socket, composer, memory, inspector, meter,
  handlers: {
    createSession: () => createSession(),
    replyFinished: () => refreshSessions().catch(report),
    titleChanged: (frame) => titleChanged(frame),
    keyMissing: () => requireKey(),
    notify: (message, error = false) => toast(message, { error }),
  },
});

const search = new ConversationSearch({
  personaId: () => state.personaId,
  open: (sessionId, messageId) => openAt(sessionId, messageId).catch(report),
  notify: (message, error = false) => toast(message, { error }),
});
watchScroll(byId('messages'), byId('jump-latest'));
const userPersona = new UserPersonaPicker({
  onChanged: (updated) => {
    sessionsVersion += 1;
    state.sessions = state.sessions.map((s) => (s.id === updated.id ? { ...s, ...updated } : s));
    renderHeader();
  },
  notify: (message, error = false) => toast(message, { error }),
});
new ChatImport({ // eslint-disable-line no-new
  personaId: () => state.personaId,
  onImported: (created) => openImported(created).catch(report),
});
const historyLearn = new HistoryLearn({ sessionId: () => state.sessionId });

/** Opens a conversation just imported (it is the persona's most recent one). */
async function openImported(created) {
  await refreshSessions();
  await selectSession(created.id);
  toast(t('chat.import.done'));
}

/** Opens a search result: its conversation, scrolled to the message. */
async function openAt(sessionId, messageId) {
  if (sessionId !== state.sessionId) await selectSession(sessionId);
  sidebar.closeIfNarrow();
  if (!(await revealMessage(conversation, messageId))) toast(t('chat.search.gone'), { error: true });
}

function renderExport() {
  const sid = state.sessionId;
  byId('export').hidden = !sid;
  if (!sid) return;
  byId('export-md').href = `/api/sessions/${seg(sid)}/export?format=md`;
  byId('export-json').href = `/api/sessions/${seg(sid)}/export?format=json`;
}

function persona() {
  return state.personas.find((p) => p.id === state.personaId) || null;
}

function session() {
  return state.sessions.find((s) => s.id === state.sessionId) || null;
}

/** Where the draft of what is open waits: per session, or per persona before the first one. */
function draftKey() {
  return state.sessionId ? `${DRAFT}session:${state.sessionId}` : `${DRAFT}persona:${state.personaId}`;
}

function updateUrl() {
  const params = new URLSearchParams();
  if (state.personaId) params.set('persona', state.personaId);
  if (state.sessionId) params.set('session', state.sessionId);
  window.history.replaceState(null, '', `/?${params}`);
}

function renderHeader() {
  const current = persona();
  byId('chat-title').textContent = current ? current.name : t('chat.header.title');
  byId('chat-avatar').replaceChildren(...(current ? [avatar(current, 34)] : []));
  byId('chat-subtitle').textContent = state.sessionId ? sessionTitle(session()) : t('chat.sidebar.untitled');
  document.title = current ? t('chat.page_title_persona', { name: current.name }) : t('app.name');
  renderExport();
  userPersona.render(state.sessionId ? session() : null);
  historyLearn.render(state.sessionId ? session() : null);
}

function renderSessions() {
  sidebar.renderSessions(state.sessions, state.sessionId);
}

/** Bumped by every change made here to `state.sessions`: a list asked for before one may lack
 * it (a late answer undid a rename made meanwhile), so it is asked for again. */
let sessionsVersion = 0;
let sessionsAsked = 0;
let newestSessions = Promise.resolve();

/** Shows the persona's sessions as the server lists them now. Only the newest request's answer
 * is shown; an older call settles when that one has (so its caller reads the newest list). */
function refreshSessions() {
  if (!state.personaId) return Promise.resolve();
  const [ticket, version, personaId] = [++sessionsAsked, sessionsVersion, state.personaId];
  newestSessions = (async () => {
    const data = await api.get(`/api/sessions?persona_id=${seg(personaId)}`);
    if (ticket !== sessionsAsked) return newestSessions;
    if (version !== sessionsVersion) return refreshSessions();
    state.sessions = listOf(data, 'sessions');
    renderSessions();
    renderHeader();
    return undefined;
  })();
  return newestSessions;
}

async function selectPersona(personaId, sessionId = null) {
  if (personaId !== state.personaId) search.clear();
  state.personaId = personaId;
  window.localStorage.setItem(LAST_PERSONA, personaId);
  sidebar.renderPersonas(state.personas, personaId);
  memory.setPersona(personaId);
  memory.load();
  socket.send({ type: 'subscribe', persona_id: personaId }).catch(() => {});
  await refreshSessions();
  const target = sessionId && state.sessions.some((s) => s.id === sessionId)
    ? sessionId : (state.sessions[0] && state.sessions[0].id) || null;
  await selectSession(target);
}

async function selectSession(sessionId) {
  state.sessionId = sessionId;
  renderSessions();
  renderHeader();
  updateUrl();
  await conversation.open(persona(), session());
  composer.restoreDraft(draftKey());
  composer.focus();
}

async function createSession(greetingIndex = conversation.greetingIndex || 0) {
  const created = await api.post('/api/sessions', { persona_id: state.personaId, greeting_index: greetingIndex });
  sessionsVersion += 1;
  state.sessions = [created, ...state.sessions.filter((s) => s.id !== created.id)];
  state.sessionId = created.id;
  renderSessions();
  renderHeader();
  updateUrl();
  return created;
}

async function newSession() {
  try {
    await createSession(0);
    await conversation.open(persona(), session());
    composer.focus();
  } catch (err) {
    toast(err.message, { error: true });
  }
}

async function renameSession(target, title) {
  try {
    const updated = await api.patch(`/api/sessions/${seg(target.id)}`, { title });
    sessionsVersion += 1;
    state.sessions = state.sessions.map((s) => (s.id === updated.id ? { ...s, ...updated } : s));
  } catch (err) {
    toast(err.message, { error: true });
  }
  renderSessions();
  renderHeader();
}

async function deleteSession(target) {
  const done = await confirmedDelete(
    t('chat.delete.text', { title: sessionTitle(target) }),
    { title: t('chat.delete.title'), confirm: t('common.confirm.delete') },
    `/api/sessions/${seg(target.id)}`,
  );
  if (!done) return;
  sessionsVersion += 1;
  state.sessions = state.sessions.filter((s) => s.id !== target.id);
  toast(t('chat.delete.done'));
  memory.load();
  if (state.sessionId === target.id) {
    await selectSession(state.sessions[0] ? state.sessions[0].id : null);
  } else {
    renderSessions();
  }
}

function titleChanged(frame) {
  const target = state.sessions.find((s) => s.id === frame.session_id);
  if (!target) return;
  sessionsVersion += 1;
  target.title = frame.title;
  renderSessions();
  renderHeader();
}

function requireKey() {
  composer.setLocked(true, t('chat.composer.locked'));
  keySetup.show(true);
}

beforeSignIn(() => composer.saveDraft(draftKey()));

socket.addEventListener('open', () => {
  if (state.personaId) socket.send({ type: 'subscribe', persona_id: state.personaId }).catch(() => {});
});

async function start() {
  const params = new URLSearchParams(window.location.search);
  try {
    const [settings, personas] = await Promise.all([api.get('/api/settings'), api.get('/api/personas'),
      applyLimits(), userPersona.load()]);
    state.personas = listOf(personas, 'personas');
    setPersonName(settings.user_name);
    const ready = settings.is_ready ?? (settings.api_key && settings.api_key.configured);
    if (!ready) requireKey();
    const wanted = params.get('persona') || window.localStorage.getItem(LAST_PERSONA);
    const first = state.personas.find((p) => p.id === wanted) || state.personas[0];
    if (!first) {
      toast(t('chat.errors.no_persona'), { error: true });
      return;
    }
    socket.connect().catch(() => {});
    await selectPersona(first.id, params.get('session'));
    const messageId = Number(params.get('message'));
    if (messageId && state.sessionId === params.get('session')) await openAt(state.sessionId, messageId);
  } catch (err) {
    toast(err.message, { error: true });
  }
  document.body.dataset.ready = 'true';
}

start();
