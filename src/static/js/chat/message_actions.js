// The actions under messages (every message can be edited, every reply regenerated or copied,
// the last incomplete reply continued, the last exchange deleted), and editing a message in place: a textarea in the
// bubble, then Save (a person's message gets a new reply) or Cancel.
import { h } from '../lib/dom.js';
import { actionButton } from './bubbles.js';
import { enterSends } from './composer.js';
import { t } from '../lib/i18n.js';

/** Adds the actions to each bubble in `list`; `find(el)` gives the message of a bubble. */
export function addActions(list, { find, regenerate, copy, edit, continueReply, remove, inspect }) {
  const bubbles = [...list.querySelectorAll('.msg')];
  const lastUser = bubbles.filter((el) => el.dataset.role === 'user').at(-1);
  bubbles.forEach((el, index) => {
    const message = find(el);
    if (!message) return;
    const meta = el.querySelector('.msg-meta');
    const last = index === bubbles.length - 1;
    if (message.role === 'assistant') {
      meta.append(
        actionButton(t('chat.actions.regenerate'), 'refresh', () => regenerate(message), { 'data-action': 'regenerate' }),
        actionButton(t('chat.actions.copy'), 'copy', () => copy(el), { 'data-action': 'copy' }),
      );
      if (inspect) {
        meta.append(actionButton(t('chat.actions.prompt'), 'layers', () => inspect(message), { 'data-action': 'prompt' }));
      }
      if (last && message.status === 'incomplete' && message.content.trim()) {
        meta.append(actionButton(t('chat.actions.continue'), 'send', () => continueReply(message),
          { 'data-action': 'continue' }));
      }
    }
    meta.append(actionButton(t('chat.actions.edit'), 'pencil', () => edit(el), { 'data-action': 'edit' }));
    if (remove && el === lastUser) {
      meta.append(actionButton(t('chat.actions.delete'), 'trash', () => remove(message), { 'data-action': 'delete' }));
    }
  });
}

/** Removes every action button (while a reply streams, or while editing). */
export function removeActions(list) {
  list.querySelectorAll('.msg-action:not(.sibling-step)').forEach((el) => el.remove());
  list.querySelectorAll('.sibling-step').forEach((el) => { el.disabled = true; });
}

/** Turns bubble `el` into an editor for `text`; `save(text)` resolves false to keep editing. */
export function editMessage(el, text, { save, cancel }) {
  const body = el.querySelector('.msg-body');
  const meta = el.querySelector('.msg-meta');
  const mine = el.dataset.role === 'user';
  const input = h('textarea', {
    class: 'edit-input', 'aria-label': mine ? t('chat.edit.label_mine') : t('chat.edit.label_reply'), rows: 3,
  });
  input.value = text;
  const saveButton = h('button', {
    type: 'submit', class: 'btn btn-primary btn-small', text: mine ? t('chat.edit.save_regenerate') : t('common.save'),
  });
  const form = h('form', { class: 'edit-form' }, input, h('div', { class: 'edit-actions' },
    h('button', { type: 'button', class: 'btn btn-quiet btn-small', text: t('common.cancel'), onClick: cancel }),
    saveButton));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!input.value.trim()) return;
    saveButton.disabled = true;
    if (!(await save(input.value))) saveButton.disabled = false;
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') cancel();
    if (enterSends(event)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  el.classList.add('msg-editing');
  body.replaceChildren(form);
  meta.replaceChildren();
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}

/** Kept for callers of the earlier name: edits the last message. */
export const editLastMessage = editMessage;
