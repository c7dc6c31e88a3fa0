// One session's active branch and the reply that is streaming into it. The server is the source
// of truth: after each reply the session is read back, so ids, alternatives and marks match it.
// Replies run on the server independently of this page: after a reload, a session switch or a
// lost connection, a reply still being written is followed again with a `resume` frame.
import { api, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import {
  bubble, copyText, emptyState, errorBlock, greetingBubble, markIncomplete, setText, typingIndicator,
} from './bubbles.js';
import { treeMethods } from './conversation_tree.js';
import { addActions, removeActions } from './message_actions.js';
import { MemoryNotes } from './memory_notes.js';
import { errorMessage, t } from '../lib/i18n.js';

const PAGE = 200;
const STOPPED = { cancelled: 'chat.message.incomplete', max_tokens: 'chat.message.cut_off' };
const CONNECTION_LOST = {
  code: 'connection_error', retryable: true,
  message: t('chat.errors.connection_lost'),
};

/** Renders a session and drives replies over the chat socket. */
export class Conversation {
  constructor({ socket, composer, memory, handlers, inspector, meter }) {
    this.list = byId('messages');
    this.inspector = inspector;
    this.meter = meter;
    this.list.addEventListener('inspect-prompt', (event) => this.inspect(event.detail.messageId, event.detail.focus));
    this.socket = socket;
    this.composer = composer;
    this.memory = memory;
    this.notes = new MemoryNotes(this.list);
    memory.onChanged = () => this.notes.load(this.session?.id, this.persona);
    this.handlers = handlers;
    this.session = null;
    this.persona = null;
    this.messages = [];
    this.hasMore = false;
    this.stream = null;
    this.errorEl = null;
    this.renderPending = false;
    socket.addEventListener('frame', (event) => this.receive(event.detail));
    socket.addEventListener('close', () => {
      if (this.stream && !this.stream.started) this.fail(CONNECTION_LOST);
      else if (this.stream) this.stream.lost = true;
    });
    socket.addEventListener('open', () => {
      if (this.stream?.lost) this.follow(this.stream.sessionId);
    });
  }

  /** Shows `session` (or the empty state for `persona` when there is none yet). */
  async open(persona, session) {
    if (this.stream) this.endStream();
    this.persona = persona;
    this.session = session;
    this.greetingIndex = session ? session.greeting_index || 0 : 0;
    this.errorEl = null;
    this.hasMore = false;
    this.messages = session ? await this.fetchMessages(session.id) : [];
    this.render();
    this.notes.load(session?.id, persona);
    this.meter?.load(session?.id);
    this.resumeIfStreaming();
  }

  /** Opens the prompt inspector on reply `messageId` of the shown session. */
  inspect(messageId, focus = null) {
    if (this.session && this.inspector && messageId != null) this.inspector.open(this.session.id, messageId, focus);
  }

  /** Follows the reply the server is still writing into the shown session, if any. */
  resumeIfStreaming() {
    const last = this.messages.at(-1);
    if (!this.session || this.stream || !last || last.status !== 'streaming') return;
    const replyEl = this.list.querySelector(`.msg[data-id="${last.id}"]`);
    if (!replyEl) return;
    removeActions(this.list);
    this.begin({ kind: 'resume' }, null, replyEl);
    this.follow(this.session.id);
  }

  follow(sessionId) {
    if (this.stream) this.stream.text = '';
    this.socket.send({ type: 'resume', session_id: sessionId }).catch(() => {});
  }

  /** Shows greeting `index`; a session that exists already remembers the choice. */
  async pickGreeting(index) {
    const previous = this.greetingIndex;
    this.greetingIndex = index;
    this.render();
    if (!this.session) return;
    try {
      this.session = await api.patch(`/api/sessions/${seg(this.session.id)}`, { greeting_index: index });
    } catch (err) {
      this.greetingIndex = previous;
      this.render();
      this.handlers.notify(err.message, true);
    }
  }

  /** The newest page of a session's messages (remembers whether older ones exist). */
  async fetchMessages(sessionId) {
    const data = await api.get(`/api/sessions/${seg(sessionId)}?limit=${PAGE}`);
    this.hasMore = Boolean(data.has_more);
    return Array.isArray(data.messages) ? data.messages : [];
  }

  async loadEarlier() {
    const first = this.messages[0];
    if (!first || !this.session) return;
    const data = await api.get(`/api/sessions/${seg(this.session.id)}?limit=${PAGE}&before=${first.id}`);
    this.hasMore = Boolean(data.has_more);
    const height = this.list.scrollHeight;
    this.messages = [...(data.messages || []), ...this.messages];
    this.render(false);
    this.list.scrollTop = this.list.scrollHeight - height;
  }

  /** Reads the session back from the server and re-renders it. */
  async reload() {
    if (!this.session) return;
    const sessionId = this.session.id;
    try {
      const messages = await this.fetchMessages(sessionId);
      if (this.session && this.session.id === sessionId && !this.stream) {
        this.messages = messages;
        this.render();
        this.meter?.load(sessionId);
        this.resumeIfStreaming();
      }
    } catch (err) {
      this.handlers.notify(err.message, true);
    }
  }

  render(toEnd = true) {
    const nodes = this.messages.flatMap((message) => this.messageNodes(message));
    if (!this.hasMore && !this.session?.imported) { // an imported chat opens with its own first message
      const pick = this.messages.length || this.stream ? null : (index) => this.pickGreeting(index);
      const greeting = greetingBubble(this.persona, this.greetingIndex, pick);
      if (greeting) nodes.unshift(greeting);
    }
    if (!this.messages.length) nodes.unshift(emptyState(this.persona, this.greetingIndex));
    if (this.hasMore && this.messages.length) {
      nodes.unshift(h('button', {
        type: 'button', class: 'btn btn-quiet btn-small load-earlier', text: t('chat.messages.load_earlier'),
        onClick: () => this.loadEarlier().catch((err) => this.handlers.notify(err.message, true)),
      }));
    }
    this.list.replaceChildren(...nodes);
    this.notes.place();
    if (!this.stream) this.addActions();
    if (this.errorEl) this.list.append(this.errorEl);
    if (toEnd) this.scrollToEnd(true, 'instant');
  }

  addActions() {
    addActions(this.list, {
      find: (el) => this.messages.find((m) => m.id === Number(el.dataset.id)),
      regenerate: (message) => this.regenerate(message.id),
      copy: (el) => this.copy(el),
      edit: (el) => this.startEdit(el),
      continueReply: (message) => this.continueReply(message),
      remove: () => this.deleteLast(),
      inspect: (message) => this.inspect(message.id),
    });
  }

  /** Starts a reply to `text`; creates the session first when there is none. */
  async send(text) {
    if (this.stream) return;
    this.clearError();
    if (!this.session) {
      try {
        this.session = await this.handlers.createSession();
      } catch (err) {
        this.composer.restore(text);
        this.handlers.notify(err.message, true);
        return;
      }
    }
    const userEl = bubble({ role: 'user', content: text });
    this.list.querySelector('.empty-state')?.remove();
    removeActions(this.list);
    this.list.append(userEl);
    this.begin({ kind: 'chat', userText: text, userEl },
      { type: 'chat', session_id: this.session.id, message: text });
  }

  /** Asks the server to stop the reply; it answers with `done` (stop_reason "cancelled"). */
  stop() {
    if (!this.stream) return;
    this.composer.stop.disabled = true;
    this.socket.send({ type: 'stop', session_id: this.stream.sessionId })
      .catch(() => this.fail(CONNECTION_LOST));
  }

  begin(stream, frame, existing = null) {
    const replyEl = existing || bubble({ role: 'assistant', content: '' }, this.persona);
    replyEl.classList.add('msg-streaming');
    if (!existing) {
      replyEl.querySelector('.msg-body').append(typingIndicator());
      this.list.append(replyEl);
    }
    this.stream = { text: '', ...stream, replyEl, started: false, sessionId: this.session.id };
    this.list.setAttribute('aria-busy', 'true');
    this.composer.setStreaming(true);
    this.scrollToEnd(true);
    if (frame) this.socket.send(frame).catch(() => this.fail(CONNECTION_LOST));
  }

  receive(frame) {
    const handler = {
      start: () => this.started(frame),
      chunk: () => this.chunk(frame),
      done: () => this.finish(frame),
      error: () => this.fail(frame),
      idle: () => this.idle(frame),
      cortex: () => this.memory.jobEvent(frame),
      title: () => this.handlers.titleChanged(frame),
    }[frame.type];
    if (handler) handler();
  }

  started(frame) {
    if (!this.stream) return;
    this.stream.started = true;
    this.stream.lost = false;
    if (frame.reply_id != null) this.stream.replyEl.dataset.id = String(frame.reply_id);
    if (this.stream.userEl && frame.message_id != null) {
      this.stream.userEl.dataset.id = String(frame.message_id);
    }
  }

  chunk(frame) {
    if (!this.stream || typeof frame.text !== 'string') return;
    this.stream.text += frame.text;
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => {
      this.renderPending = false;
      if (!this.stream) return;
      setText(this.stream.replyEl, this.stream.text);
      this.scrollToEnd();
    });
  }

  finish(frame) {
    const stream = this.stream;
    if (!stream) return;
    this.endStream();
    const text = typeof frame.text === 'string' ? frame.text : stream.text;
    if (!text && frame.message_id == null) {
      stream.replyEl.remove();
    } else {
      stream.replyEl.dataset.id = frame.message_id ?? '';
      setText(stream.replyEl, text);
      const label = STOPPED[frame.stop_reason] && t(STOPPED[frame.stop_reason]);
      markIncomplete(stream.replyEl, Boolean(label), label);
    }
    this.memory.update(frame.cortex);
    this.handlers.replyFinished(stream.sessionId);
    this.reload();
  }

  fail(frame) {
    const stream = this.stream;
    const message = errorMessage(frame.code, frame.message || t('chat.errors.reply_failed'), frame);
    if (!stream) {
      this.handlers.notify(message, true);
      return;
    }
    this.endStream();
    if (frame.code === 'not_configured') this.handlers.keyMissing();
    if (stream.started) {
      if (stream.text.trim()) markIncomplete(stream.replyEl, true);
      this.reload();
      return;
    }
    if (stream.kind !== 'continue' && stream.kind !== 'resume') stream.replyEl.remove();
    if (stream.kind === 'chat' && !stream.started) {
      stream.userEl.classList.add('msg-unsent');
      this.composer.restore(stream.userText);
    }
    this.errorEl = errorBlock(message, () => this.retry(stream));
    this.list.append(this.errorEl);
    this.scrollToEnd(true);
  }

  /** `resume` found nothing in flight: the reply finished meanwhile, so read it back. */
  idle(frame) {
    if (!this.stream || frame.session_id !== this.stream.sessionId) return;
    this.endStream();
    this.reload();
  }

  retry(stream) {
    this.clearError();
    if (stream.kind === 'chat' && !stream.started) {
      stream.userEl.remove();
      if (this.composer.text() === stream.userText) this.composer.setText('');
      this.send(stream.userText);
    } else {
      this.regenerate();
    }
  }

  clearError() {
    if (this.errorEl) this.errorEl.remove();
    this.errorEl = null;
    this.list.querySelectorAll('.msg-unsent').forEach((el) => el.remove());
  }

  endStream() {
    this.stream = null;
    this.renderPending = false;
    this.list.removeAttribute('aria-busy');
    this.composer.setStreaming(false);
    this.list.querySelector('.msg-streaming')?.classList.remove('msg-streaming');
  }

  copy(el) {
    const message = this.messages.find((m) => m.id === Number(el.dataset.id));
    copyText(message ? message.content : el.textContent)
      .then(() => this.handlers.notify(t('chat.message.copied')))
      .catch(() => this.handlers.notify(t('chat.message.copy_refused'), true));
  }

  /** Follows the end of the conversation; `instant` jumps without the list's smooth scrolling
   * (a conversation being drawn lands at its end, not on the way there when its notes arrive). */
  scrollToEnd(force = false, behavior = 'auto') {
    const scroller = this.list;
    const nearEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
    if (force || nearEnd) scroller.scrollTo({ top: scroller.scrollHeight, behavior });
  }
}

Object.assign(Conversation.prototype, treeMethods);
