// The conversation tree in the chat view: a message's `< n/m >` alternatives and its failure
// with Retry, switching branches, regenerating any reply, continuing a reply, editing any
// message, and deleting the last exchange. Mixed into Conversation (conversation.js), whose state these methods share.
import { api, seg } from '../lib/api.js';
import { confirmAction } from '../lib/ui.js';
import { bubble, errorBlock } from './bubbles.js';
import { siblingNav } from './branches.js';
import { editMessage, removeActions } from './message_actions.js';
import { errorMessage, t } from '../lib/i18n.js';

/** Conversation methods for the tree (`this` is the Conversation). */
export const treeMethods = {
  /** A message's bubble (with its `< n/m >`), and for a failed reply its error with Retry. */
  messageNodes(message) {
    const el = bubble(message, this.persona);
    const nav = siblingNav(message, (id) => this.switchTo(id));
    if (nav) el.querySelector('.msg-meta').prepend(nav);
    if (!message.error) return [el];
    const text = errorMessage(message.error.code, message.error.message, message.error);
    const retry = errorBlock(text, () => this.regenerate(message.id));
    retry.dataset.for = String(message.id);
    if (message.content.trim()) return [el, retry];
    el.classList.add('msg-failed');
    return nav ? [el, retry] : [retry];
  },

  /** Shows the branch through message `id` (one of the alternatives at a position). */
  async switchTo(id) {
    if (this.stream || !this.session) return;
    try {
      const data = await api.put(`/api/sessions/${seg(this.session.id)}/active`, { message_id: id });
      this.messages = data.messages || [];
      this.hasMore = Boolean(data.has_more);
      this.render(false);
    } catch (err) {
      this.handlers.notify(err.message, true);
    }
  },

  /** A new reply to message `id` (a reply: answered again, the old one kept as an alternative;
   * a person's message: answered), by default to the end of the branch. */
  regenerate(id = null) {
    if (this.stream || !this.session) return;
    this.clearError();
    const target = id == null ? this.messages.at(-1) : this.messages.find((m) => m.id === id);
    const cut = target && target.role === 'assistant' ? target.id : null;
    if (cut != null) {
      const at = this.messages.findIndex((m) => m.id === cut);
      this.messages = this.messages.slice(0, at);
      this.render(false);
    } else if (!target) {
      this.list.querySelector('.msg-assistant:last-of-type')?.remove();
    }
    removeActions(this.list);
    const frame = { type: 'regenerate', session_id: this.session.id };
    if (target) frame.message_id = target.id;
    this.begin({ kind: 'regenerate' }, frame);
  },

  /** The model continues reply `message` from its text, in the same bubble. */
  continueReply(message) {
    if (this.stream || !this.session) return;
    const replyEl = this.list.querySelector(`.msg[data-id="${message.id}"]`);
    if (!replyEl) return;
    removeActions(this.list);
    this.begin({ kind: 'continue', text: message.content.trimEnd() },
      { type: 'continue', message_id: message.id }, replyEl);
  },

  startEdit(el) {
    const id = Number(el.dataset.id);
    const message = this.messages.find((m) => m.id === id);
    if (!message || this.stream) return;
    removeActions(this.list);
    editMessage(el, message.content, {
      save: (text) => this.saveEdit(message, text),
      cancel: () => {
        this.render(false);
        this.list.querySelector(`.msg[data-id="${id}"] [data-action=edit]`)?.focus();
      },
    });
  },

  /** Deletes the last exchange (the person's last message and its reply) after asking; memory
   * then reconciles what it learned only from them, which the indicator follows. */
  async deleteLast() {
    if (!this.session || this.stream) return;
    const ok = await confirmAction(t('chat.delete_last.text'),
      { title: t('chat.delete_last.title'), confirm: t('common.confirm.delete') });
    if (!ok) return;
    let data;
    try {
      data = await api.del(`/api/sessions/${seg(this.session.id)}/messages/last`);
    } catch (err) {
      this.handlers.notify(err.message, true);
      return;
    }
    this.messages = data.messages || [];
    this.hasMore = Boolean(data.has_more);
    this.render();
    this.memory.load();
  },

  /** Saves an edit as a new alternative; a person's edited message then gets its reply. */
  async saveEdit(message, text) {
    let data;
    try {
      data = await api.patch(`/api/messages/${message.id}`, { content: text });
    } catch (err) {
      this.handlers.notify(err.message, true);
      return false;
    }
    this.messages = data.messages || [];
    this.hasMore = Boolean(data.has_more);
    this.render();
    if (message.role === 'user') this.regenerate(data.message.id);
    return true;
  },
};
