// Conversation search in the sidebar (across the open persona's sessions, SQLite FTS5 on the
// server) and "jump to latest" in the conversation. A result opens its conversation scrolled to
// the message, loading earlier pages until it is there.
import { api, seg } from '../lib/api.js';
import { byId, formatRelative, h } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

const DEBOUNCE_MS = 250;
const NEAR_END_PX = 200;

function snippetEl(result) {
  const text = result.snippet || '';
  const parts = [];
  let at = 0;
  for (const [start, end] of result.highlights || []) {
    if (start < at || end > text.length) continue;
    parts.push(text.slice(at, start), h('mark', { text: text.slice(start, end) }));
    at = end;
  }
  parts.push(text.slice(at));
  return h('span', { class: 'search-snippet' }, parts);
}

/** The search box; `open(sessionId, messageId)` shows a result, `personaId()` scopes the search. */
export class ConversationSearch {
  constructor({ personaId, open, notify }) {
    this.personaId = personaId;
    this.openResult = open;
    this.notify = notify;
    this.input = byId('search-input');
    this.results = byId('search-results');
    this.sessions = byId('session-list');
    this.timer = null;
    this.asked = 0;
    byId('search-form').addEventListener('submit', (event) => { event.preventDefault(); this.run(); });
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.input.value) { event.stopPropagation(); this.clear(); }
    });
  }

  /** Empties the box and shows the session list again (e.g. on another persona). */
  clear() {
    this.input.value = '';
    this.show(null);
  }

  async run() {
    const q = this.input.value.trim();
    const asked = ++this.asked;
    if (!q || !this.personaId()) {
      this.show(null);
      return;
    }
    try {
      const data = await api.get(`/api/search?persona_id=${seg(this.personaId())}&q=${encodeURIComponent(q)}`);
      if (asked === this.asked) this.show(data.results || []);
    } catch (err) {
      if (asked === this.asked) this.notify(err.message, true);
    }
  }

  show(results) {
    const searching = results !== null;
    this.sessions.hidden = searching;
    this.results.hidden = !searching;
    if (!searching) return;
    if (!results.length) {
      this.results.replaceChildren(h('li', { class: 'muted small search-none', text: t('chat.search.none') }));
      return;
    }
    this.results.replaceChildren(...results.map((result) => h('li', {},
      h('button', {
        type: 'button', class: 'search-result', dataset: { messageId: result.message_id },
        onClick: () => this.openResult(result.session_id, result.message_id),
      },
      h('span', { class: 'search-meta' },
        h('span', { class: 'search-title', text: result.session_title || t('chat.sidebar.untitled') }),
        h('span', { text: formatRelative(result.created_at) })),
      snippetEl(result)))));
  }
}

/** Loads earlier pages of `conversation` until message `messageId` is shown, then points at it. */
export async function revealMessage(conversation, messageId) {
  const find = () => conversation.list.querySelector(`.msg[data-id="${messageId}"]`);
  while (!find() && conversation.hasMore) await conversation.loadEarlier();
  const el = find();
  if (!el) return false;
  conversation.list.querySelectorAll('.msg-found').forEach((old) => old.classList.remove('msg-found'));
  el.classList.add('msg-found');
  el.tabIndex = -1;
  el.scrollIntoView({ block: 'center' });
  el.focus({ preventScroll: true });
  return true;
}

/** Shows the "jump to latest" button while the conversation is scrolled away from its end. */
export function watchScroll(list, button) {
  const update = () => {
    button.hidden = list.scrollHeight - list.scrollTop - list.clientHeight < NEAR_END_PX;
  };
  list.addEventListener('scroll', update, { passive: true });
  new MutationObserver(update).observe(list, { childList: true, subtree: true, characterData: true });
  button.addEventListener('click', () => {
    list.scrollTo({ top: list.scrollHeight });
    button.hidden = true;
  });
  update();
}
