// Memory notes in the conversation's timeline: "Mira remembered: …" after the message a memory
// update read up to, with the lines it added and a link to that change's diff. The server
// derives them from the revisions (GET /api/sessions/<sid>/memory-notes), so they stay in place
// after a reload and follow the active branch.
import { api, seg } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { t, tn } from '../lib/i18n.js';

const AT_END_PX = 8;

/** Loads a session's notes and places them after their messages in `list`. */
export class MemoryNotes {
  constructor(list) {
    this.list = list;
    this.sessionId = null;
    this.persona = null;
    this.notes = [];
  }

  /** Fetches the notes of `sessionId` (none for a new conversation) and shows them. */
  async load(sessionId, persona) {
    this.sessionId = sessionId || null;
    this.persona = persona;
    if (!sessionId) {
      this.notes = [];
      this.place();
      return;
    }
    try {
      const data = await api.get(`/api/sessions/${seg(sessionId)}/memory-notes`);
      if (this.sessionId !== sessionId) return;
      this.notes = Array.isArray(data.notes) ? data.notes : [];
      this.place();
    } catch {
      // notes are a comfort; the conversation works without them
    }
  }

  /** (Re)inserts every note after its message; a note whose message is not shown waits. The
   * notes arrive after the messages are drawn: a conversation shown at its end stays there. */
  place() {
    const list = this.list;
    const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < AT_END_PX;
    list.querySelectorAll('.memory-note').forEach((el) => el.remove());
    for (const note of this.notes) {
      const anchor = list.querySelector(`.msg[data-id="${Number(note.after_message_id)}"]`);
      if (anchor) anchor.after(this.element(note));
    }
    if (atEnd) list.scrollTo({ top: list.scrollHeight, behavior: 'instant' });
  }

  element(note) {
    const name = this.persona?.name || t('chat.memory_note.the_persona');
    const lines = note.files.flatMap((file) => file.added);
    const more = note.files.reduce((sum, file) => sum + file.more, 0);
    const head = t(lines.length ? 'chat.memory_note.remembered' : 'chat.memory_note.updated', { name });
    return h('aside', { class: 'memory-note', 'aria-label': t('chat.memory_note.label', { head }), dataset: { after: note.after_message_id } },
      h('p', { class: 'memory-note-head', text: head }),
      lines.length ? h('ul', { class: 'memory-note-lines' }, ...lines.map((line) => h('li', { text: line.replace(/^[-*+]\s+/, '') }))) : null,
      more ? h('p', { class: 'memory-note-more', text: tn('chat.memory_note.more', more) }) : null,
      h('p', { class: 'memory-note-links' }, ...note.files.map((file) => h('a', {
        href: this.diffUrl(file), text: t('chat.memory_note.see_change', { file: file.filename }),
      }))));
  }

  diffUrl(file) {
    const params = new URLSearchParams({ persona: this.persona?.id || '', file: file.filename,
      rev: String(file.rev), view: 'history' });
    return `/settings?${params}#memory`;
  }
}
