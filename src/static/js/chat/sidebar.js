// The sidebar: personas, the chosen persona's sessions (new, rename, delete), and on narrow
// screens the drawer that holds them. The open drawer is modal: the page behind it is inert,
// Tab wraps inside it, and Escape (wherever the focus is) closes it and returns to its toggle.
import { byId, formatRelative, h } from '../lib/dom.js';
import { wrapTab } from '../lib/focus.js';
import { avatar } from '../lib/persona_view.js';
import { icon } from '../lib/icons.js';
import { t } from '../lib/i18n.js';

const NARROW = window.matchMedia('(max-width: 860px)');

/** Renders personas and sessions and reports what the person picks through callbacks. */
export class Sidebar {
  constructor(handlers) {
    this.handlers = handlers;
    this.root = byId('sidebar');
    this.personaList = byId('persona-list');
    this.sessionList = byId('session-list');
    this.empty = byId('session-empty');
    this.openButton = byId('sidebar-open');
    this.scrim = byId('scrim');
    this.main = byId('main');
    byId('new-session').addEventListener('click', () => this.handlers.newSession());
    this.openButton.addEventListener('click', () => this.open());
    byId('sidebar-close').addEventListener('click', () => this.close());
    this.scrim.addEventListener('click', () => this.close());
    document.addEventListener('keydown', (event) => this.onKey(event));
    NARROW.addEventListener('change', () => { if (!NARROW.matches) this.release(); });
  }

  isOpen() {
    return this.root.classList.contains('open');
  }

  onKey(event) {
    if (!this.isOpen() || event.defaultPrevented || event.target.closest('dialog')) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      this.close();
    } else if (event.key === 'Tab') {
      wrapTab(this.root, event);
    }
  }

  /** Lists the personas, marking `activeId`. */
  renderPersonas(personas, activeId) {
    this.personaList.replaceChildren(...personas.map((persona) => {
      const active = persona.id === activeId;
      const button = h('button', {
        type: 'button', class: 'persona-btn', 'aria-current': active ? 'true' : null,
        dataset: { personaId: persona.id },
        onClick: () => { this.handlers.selectPersona(persona.id); this.closeIfNarrow(); },
      }, avatar(persona),
      h('span', { class: 'persona-name', text: persona.name }));
      return h('li', { class: active ? 'active' : null }, button);
    }));
  }

  /** Lists the persona's sessions, marking `activeId`. While a name is being typed the list
   * stays as it is (a title or a refresh arriving then would take the input away); the rename's
   * end renders it anew. */
  renderSessions(sessions, activeId) {
    this.empty.hidden = sessions.length > 0;
    if (this.renaming) return;
    this.sessionList.replaceChildren(...sessions.map((session) => this.sessionItem(session, activeId)));
  }

  sessionItem(session, activeId) {
    const title = sessionTitle(session);
    const active = session.id === activeId;
    const open = h('button', {
      type: 'button', class: 'session-btn', 'aria-current': active ? 'true' : null,
      dataset: { sessionId: session.id },
      onClick: () => { this.handlers.selectSession(session.id); this.closeIfNarrow(); },
    }, h('span', { class: 'session-title', text: title }),
    h('span', { class: 'session-time', text: formatRelative(session.updated_at) }));
    const rename = h('button', {
      type: 'button', class: 'icon-btn icon-btn-sm', 'aria-label': t('chat.sidebar.rename_label', { title }),
      title: t('chat.sidebar.rename'), onClick: () => this.startRename(item, session),
    }, icon('pencil', 15));
    const remove = h('button', {
      type: 'button', class: 'icon-btn icon-btn-sm danger', 'aria-label': t('chat.sidebar.delete_label', { title }),
      title: t('chat.sidebar.delete'), onClick: () => this.handlers.deleteSession(session),
    }, icon('trash', 15));
    const item = h('li', { class: `session-item${active ? ' active' : ''}` }, open,
      h('span', { class: 'session-actions' }, rename, remove));
    return item;
  }

  startRename(item, session) {
    const input = h('input', {
      type: 'text', class: 'rename-input', value: sessionTitle(session), maxlength: 120,
      'aria-label': t('chat.sidebar.rename_input'),
    });
    let finished = false;
    this.renaming = true;
    const finish = async (save) => {
      if (finished) return;
      finished = true;
      this.renaming = false;
      const title = input.value.trim();
      if (save && title && title !== session.title) {
        await this.handlers.renameSession(session, title);
      } else {
        this.handlers.refreshSessions();
      }
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') { event.preventDefault(); finish(true); }
      if (event.key === 'Escape') { event.preventDefault(); event.stopPropagation(); finish(false); }
    });
    input.addEventListener('blur', () => finish(true));
    item.replaceChildren(h('div', { class: 'rename-row' }, input));
    input.focus();
    input.select();
  }

  open() {
    this.root.classList.add('open');
    this.scrim.hidden = false;
    this.main.inert = true;
    this.openButton.setAttribute('aria-expanded', 'true');
    const current = this.root.querySelector('[aria-current="true"]') || byId('new-session');
    current.focus();
  }

  close() {
    if (!this.isOpen()) return;
    this.release();
    this.openButton.focus();
  }

  /** Closes the drawer without moving the focus (the screen became wide enough for a sidebar). */
  release() {
    this.root.classList.remove('open');
    this.scrim.hidden = true;
    this.main.inert = false;
    this.openButton.setAttribute('aria-expanded', 'false');
  }

  closeIfNarrow() {
    if (NARROW.matches) this.close();
  }
}

/** The title shown for a session (untitled ones get a neutral label). */
export function sessionTitle(session) {
  return (session && session.title) || t('chat.sidebar.untitled');
}
