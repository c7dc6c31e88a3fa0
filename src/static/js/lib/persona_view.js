// How a persona looks on a page: its avatar (the picture, or its initials) and card text with
// the `{{char}}` / `{{user}}` placeholders filled in the way the prompt fills them.
import { h, initials } from './dom.js';
import { t } from './i18n.js';

export const PERSON_NAME_CHANGED = 'persona-cortex:person-name';
let personName = '';

/** The person's name from the settings, for `{{user}}` where a persona sets none. A change is
 * announced (`PERSON_NAME_CHANGED` on the document), so card text already shown can follow. */
export function setPersonName(name) {
  const next = (name || '').trim();
  if (next === personName) return;
  personName = next;
  document.dispatchEvent(new Event(PERSON_NAME_CHANGED));
}

/** The avatar element of `persona`: its picture when it has one, else its initials. */
export function avatar(persona, size = 30) {
  if (persona && persona.avatar_url) {
    return h('img', {
      class: 'avatar avatar-img', src: persona.avatar_url, alt: '', width: size, height: size,
      decoding: 'async', 'aria-hidden': 'true',
    });
  }
  return h('span', { class: 'avatar', 'aria-hidden': 'true', text: initials(persona ? persona.name : '?') });
}

/** `text` with `{{char}}`, `<char>`, `<bot>`, `{{user}}`, `<user>` resolved (case-insensitive). */
export function cardText(text, persona) {
  if (!text || !persona) return text || '';
  const nickname = persona.card && typeof persona.card.nickname === 'string' ? persona.card.nickname.trim() : '';
  const char = nickname || persona.name;
  // No name set: the server's card fallback (`prompts.CARD_USER`), so the page shows what the
  // model is sent.
  const user = (persona.user_name || '').trim() || personName || t('common.nameless_user');
  return text
    .replace(/\{\{(\/\/|comment:)[^{}]*\}\}/gi, '')
    .replace(/\{\{char\}\}|<char>|<bot>|(\{\{user\}\}|<user>)/gi, (match, isUser) => (isUser ? user : char));
}
