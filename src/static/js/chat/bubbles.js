// Message bubbles. Assistant text is Markdown (sanitised); the person's own text stays plain.
import { h } from '../lib/dom.js';
import { icon } from '../lib/icons.js';
import { renderMarkdown } from '../lib/markdown.js';

/** A bubble for a stored or streaming message `{id, role, content, status}`. */
export function bubble(message) {
  const body = h('div', { class: message.role === 'assistant' ? 'msg-body markdown' : 'msg-body' });
  const el = h('article', {
    class: `msg msg-${message.role}`,
    dataset: { role: message.role, id: message.id ?? '' },
    'aria-label': message.role === 'user' ? 'You' : 'Reply',
  }, body, h('div', { class: 'msg-meta' }));
  setText(el, message.content || '');
  markIncomplete(el, message.status === 'incomplete' && !message.error,
    message.stop_reason === 'interrupted' ? 'Interrupted' : 'Incomplete');
  if (message.edited) {
    el.querySelector('.msg-meta').append(h('span', { class: 'badge badge-edited', text: 'Edited' }));
  }
  return el;
}

/** Replaces a bubble's text. */
export function setText(el, text) {
  const body = el.querySelector('.msg-body');
  if (el.dataset.role === 'assistant') renderMarkdown(body, text);
  else body.textContent = text;
}

/** Shows or removes the "incomplete" badge (a stopped, failed or cut-off reply). */
export function markIncomplete(el, incomplete, label = 'Incomplete') {
  el.classList.toggle('msg-incomplete', incomplete);
  const meta = el.querySelector('.msg-meta');
  const old = meta.querySelector('.badge-incomplete');
  if (old) old.remove();
  if (incomplete) {
    meta.prepend(h('span', { class: 'badge badge-incomplete', title: 'This reply was stopped or failed before it finished.' },
      icon('alert', 13), label));
  }
}

/** A small text button with an icon for a bubble's action row. */
export function actionButton(label, iconName, onClick, extra = {}) {
  return h('button', { type: 'button', class: 'msg-action', onClick, ...extra },
    icon(iconName, 14), h('span', { text: label }));
}

/** The three-dot "thinking" placeholder shown until the first chunk arrives. */
export function typingIndicator() {
  return h('span', { class: 'typing', 'aria-label': 'Writing…' },
    h('span'), h('span'), h('span'));
}

/** An error shown in place of the reply, with a Retry button. */
export function errorBlock(message, onRetry) {
  const retry = h('button', { type: 'button', class: 'btn btn-small', onClick: onRetry },
    icon('refresh', 14), 'Retry');
  return h('div', { class: 'msg-error', role: 'alert' },
    h('span', { class: 'msg-error-icon' }, icon('alert', 16)),
    h('p', { class: 'msg-error-text', text: message }),
    retry);
}

/** The persona's greeting, if it has one. */
function greetingOf(persona) {
  return (persona && typeof persona.greeting === 'string' && persona.greeting.trim()) || '';
}

/** The placeholder of a session without messages (the greeting bubble follows it, if any). */
export function emptyState(persona) {
  const who = persona || { name: 'your persona' };
  const hasGreeting = Boolean(greetingOf(persona));
  return h('div', { class: hasGreeting ? 'empty-state empty-state-greeted' : 'empty-state' },
    h('div', { class: 'empty-icon', 'aria-hidden': 'true' }, icon('chat', 28)),
    h('h2', { class: 'empty-title', text: `Chat with ${who.name}` }),
    h('p', { class: 'empty-intro', text: hasGreeting ? 'Reply to start the conversation.' : 'Say hello to start a conversation.' }));
}

/** The persona's greeting as the opening bubble of a conversation: shown, never stored. */
export function greetingBubble(persona) {
  const greeting = greetingOf(persona);
  if (!greeting) return null;
  const body = h('div', { class: 'greeting-body markdown' });
  renderMarkdown(body, greeting);
  return h('div', { class: 'greeting', role: 'article', 'aria-label': `Greeting from ${persona.name}` },
    h('p', { class: 'greeting-label' }, icon('hand', 13), h('span', { text: 'Greeting' })),
    body);
}

/** Puts `text` on the clipboard (rejects where the browser does not allow it). */
export function copyText(text) {
  return navigator.clipboard.writeText(text);
}
