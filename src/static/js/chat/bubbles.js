// Message bubbles. Assistant text is Markdown (sanitised); the person's own text stays plain.
import { formatDateTime, formatTime, h } from '../lib/dom.js';
import { icon } from '../lib/icons.js';
import { renderMarkdown } from '../lib/markdown.js';
import { avatar, cardText } from '../lib/persona_view.js';
import { api, seg } from '../lib/api.js';
import { t } from '../lib/i18n.js';

/** A bubble for a stored or streaming message `{id, role, content, status}`; replies carry
 * the persona's avatar. */
export function bubble(message, persona = null) {
  const body = h('div', { class: message.role === 'assistant' ? 'msg-body markdown' : 'msg-body' });
  const el = h('article', {
    class: `msg msg-${message.role}`,
    dataset: { role: message.role, id: message.id ?? '' },
    'aria-label': message.role === 'user' ? t('chat.message.you') : t('chat.message.reply'),
  }, message.role === 'assistant' && persona ? h('div', { class: 'msg-author' }, avatar(persona, 24)) : null,
  body, h('div', { class: 'msg-meta' }, timeEl(message.created_at)));
  setText(el, message.content || '');
  // A failed reply is incomplete too when it holds text (stopped, cut off or broken off by an
  // error); one with no text at all is only its error.
  const partial = Boolean((message.content || '').trim());
  markIncomplete(el, message.status === 'incomplete' && (partial || !message.error),
    message.stop_reason === 'interrupted' ? t('chat.message.interrupted') : t('chat.message.incomplete'));
  if (message.edited) {
    el.querySelector('.msg-meta').append(h('span', { class: 'badge badge-edited', text: t('chat.message.edited') }));
  }
  const used = memoryUsed(message);
  if (used) el.querySelector('.msg-meta').append(used);
  const world = worldUsed(message);
  if (world) el.querySelector('.msg-meta').append(world);
  return el;
}

/** "World info used": the lorebook entries that were in a reply's prompt, each with what
 * brought it in (its key, or "always in") and, opened, its text as it was sent. */
function worldUsed(message) {
  const fired = message.role === 'assistant' && Array.isArray(message.world_info) ? message.world_info : [];
  if (!fired.length) return null;
  const items = fired.map((entry) => h('li', { dataset: { entryId: entry.entry_id } },
    entry.name ? h('strong', { text: entry.name }) : null, entry.name ? ' ' : null,
    h('span', { class: 'muted', text: entry.key == null ? t('chat.message.world_constant') : t('chat.message.world_key', { key: entry.key }) }),
    h('p', { class: 'msg-world-text', text: entry.content })));
  return h('details', { class: 'msg-memory msg-world' },
    h('summary', { text: t('chat.message.world_used'), title: t('chat.message.world_used_title') }),
    h('ul', { class: 'msg-memory-list msg-world-list' }, ...items));
}

const MEMORY_FILES = ['memory.md', 'soul.md', 'relationship.md'];

/** "Memory used": the cortex revision of each file that was in a reply's prompt, each a link
 * to that revision in the history, and "Show in the prompt", which opens the prompt inspector
 * at those cortex files (an `inspect-prompt` event the conversation handles). Opened, the links are numbered as the history numbers them
 * ("memory.md #3", the third version of the file): the histories are read then, not for every
 * reply shown. */
function memoryUsed(message) {
  const revisions = message.role === 'assistant' ? message.cortex_revisions : null;
  if (!revisions || typeof revisions !== 'object') return null;
  const links = MEMORY_FILES.filter((file) => Number.isInteger(revisions[file])).map((file) => {
    const params = new URLSearchParams({ persona: message.persona_id, file, rev: String(revisions[file]), view: 'history' });
    return h('a', { href: `/settings?${params}#memory`, text: file, dataset: { file } });
  });
  if (!links.length) return null;
  const list = links.flatMap((link, index) => (index ? [', ', link] : [link]));
  const inPrompt = h('button', {
    type: 'button', class: 'btn btn-quiet btn-small msg-memory-prompt', text: t('chat.message.memory_in_prompt'),
    onClick: (event) => event.currentTarget.dispatchEvent(new CustomEvent('inspect-prompt', {
      bubbles: true, detail: { messageId: message.id, focus: 'cortex' },
    })),
  });
  const details = h('details', { class: 'msg-memory' },
    h('summary', { text: t('chat.message.memory_used'), title: t('chat.message.memory_used_title') }),
    h('p', { class: 'msg-memory-list' }, ...list, ' ', inPrompt));
  details.addEventListener('toggle', () => {
    if (details.open && !details.dataset.numbered) {
      details.dataset.numbered = 'yes';
      numberVersions(message.persona_id, revisions, links);
    }
  });
  return details;
}

/** Labels each link with its revision's version number in the file's history; a revision no
 * longer listed (or a history that cannot be read) keeps the file name alone. */
async function numberVersions(personaId, revisions, links) {
  await Promise.all(links.map(async (link) => {
    const file = link.dataset.file;
    try {
      const history = await api.get(`/api/personas/${seg(personaId)}/cortex/${seg(file)}/history`);
      const index = history.revisions.findIndex((revision) => revision.rev === revisions[file]);
      if (index >= 0) link.textContent = t('chat.message.memory_version', { file, version: history.revisions.length - index });
    } catch {
      // the plain file name stays: the link still opens the right revision
    }
  }));
}

/** The message's time in small print ("14:03", or with the date when not today). */
function timeEl(iso) {
  if (!iso) return null;
  return h('time', { class: 'msg-time', datetime: iso, title: formatDateTime(iso), text: formatTime(iso) });
}

/** Replaces a bubble's text. */
export function setText(el, text) {
  const body = el.querySelector('.msg-body');
  if (el.dataset.role === 'assistant') renderMarkdown(body, text);
  else body.textContent = text;
}

/** Shows or removes the "incomplete" badge (a stopped, failed or cut-off reply). */
export function markIncomplete(el, incomplete, label = t('chat.message.incomplete')) {
  el.classList.toggle('msg-incomplete', incomplete);
  const meta = el.querySelector('.msg-meta');
  const old = meta.querySelector('.badge-incomplete');
  if (old) old.remove();
  if (incomplete) {
    meta.prepend(h('span', { class: 'badge badge-incomplete', title: t('chat.message.incomplete_title') },
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
  return h('span', { class: 'typing', 'aria-label': t('chat.message.writing') },
    h('span'), h('span'), h('span'));
}

/** An error shown in place of the reply, with a Retry button. */
export function errorBlock(message, onRetry) {
  const retry = h('button', { type: 'button', class: 'btn btn-small', onClick: onRetry },
    icon('refresh', 14), t('chat.message.retry'));
  return h('div', { class: 'msg-error', role: 'alert' },
    h('span', { class: 'msg-error-icon' }, icon('alert', 16)),
    h('p', { class: 'msg-error-text', text: message }),
    retry);
}

/** The persona's greetings: the main one, then the alternates (a card's swipes). */
function greetingsOf(persona) {
  if (!persona) return [];
  const all = [persona.greeting, ...(persona.alternate_greetings || [])];
  return all.map((text) => (typeof text === 'string' ? cardText(text.trim(), persona) : ''));
}

/** The greeting at `index` (the main one when out of range). */
function greetingOf(persona, index = 0) {
  const all = greetingsOf(persona);
  return all[index] || all[0] || '';
}

/** The placeholder of a session without messages (the greeting bubble follows it, if any). */
export function emptyState(persona, index = 0) {
  const who = persona || { name: t('chat.empty.your_persona') };
  const hasGreeting = Boolean(greetingOf(persona, index));
  return h('div', { class: hasGreeting ? 'empty-state empty-state-greeted' : 'empty-state' },
    h('div', { class: 'empty-icon', 'aria-hidden': 'true' }, icon('chat', 28)),
    h('h2', { class: 'empty-title', text: t('chat.empty.title', { name: who.name }) }),
    h('p', { class: 'empty-intro', text: hasGreeting ? t('chat.empty.reply_to_greeting') : t('chat.empty.say_hello') }));
}

/** The persona's greeting as the opening bubble of a conversation: shown, never stored. With
 * `onPick` (before the first message) and alternates, the person can browse or shuffle them. */
export function greetingBubble(persona, index = 0, onPick = null) {
  const greeting = greetingOf(persona, index);
  if (!greeting) return null;
  const body = h('div', { class: 'greeting-body markdown' });
  renderMarkdown(body, greeting);
  const total = greetingsOf(persona).length;
  const pick = (next) => onPick(((next % total) + total) % total);
  const controls = onPick && total > 1 ? h('div', { class: 'greeting-pick', role: 'group', 'aria-label': t('chat.greeting.choose') },
    h('button', { type: 'button', class: 'msg-action', 'aria-label': t('chat.greeting.previous'), onClick: () => pick(index - 1) }, '‹'),
    h('span', { class: 'greeting-count', text: `${index + 1} / ${total}` }),
    h('button', { type: 'button', class: 'msg-action', 'aria-label': t('chat.greeting.next'), onClick: () => pick(index + 1) }, '›'),
    h('button', { type: 'button', class: 'msg-action', 'aria-label': t('chat.greeting.shuffle_label'),
      onClick: () => pick(index + 1 + Math.floor(Math.random() * (total - 1))) }, t('chat.greeting.shuffle'))) : null;
  return h('div', { class: 'greeting', role: 'article', 'aria-label': t('chat.greeting.label', { name: persona.name }) },
    h('div', { class: 'greeting-head' }, avatar(persona, 24),
      h('p', { class: 'greeting-label' }, icon('hand', 13), h('span', { text: t('chat.greeting.title') }))),
    body, controls);
}

/** Puts `text` on the clipboard (rejects where the browser does not allow it). */
export function copyText(text) {
  return navigator.clipboard.writeText(text);
}
