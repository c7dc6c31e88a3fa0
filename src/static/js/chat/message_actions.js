// The actions under the last messages (regenerate, copy, edit), and editing the last message in
// place: a textarea in the bubble, then Save (which asks for a new reply) or Cancel.
import { h } from '../lib/dom.js';
import { actionButton } from './bubbles.js';
import { enterSends } from './composer.js';

/** Adds Regenerate and Copy under the last reply and Edit under the last message of the person. */
export function addActions(list, { regenerate, copy, edit }) {
  const bubbles = [...list.querySelectorAll('.msg')];
  const last = bubbles.at(-1);
  if (!last) return;
  if (last.dataset.role === 'assistant') {
    last.querySelector('.msg-meta').append(
      actionButton('Regenerate', 'refresh', regenerate, { 'data-action': 'regenerate' }),
      actionButton('Copy', 'copy', () => copy(last), { 'data-action': 'copy' }),
    );
  }
  const lastUser = bubbles.filter((el) => el.dataset.role === 'user').at(-1);
  if (lastUser) {
    lastUser.querySelector('.msg-meta').append(
      actionButton('Edit', 'pencil', () => edit(lastUser), { 'data-action': 'edit' }));
  }
}

/** Removes every action button (while a reply streams, or while editing). */
export function removeActions(list) {
  list.querySelectorAll('.msg-action').forEach((el) => el.remove());
}

/** Turns bubble `el` into an editor for `text`; `save(text)` resolves false to keep editing. */
export function editLastMessage(el, text, { save, cancel }) {
  const body = el.querySelector('.msg-body');
  const meta = el.querySelector('.msg-meta');
  const input = h('textarea', { class: 'edit-input', 'aria-label': 'Edit your message', rows: 3 });
  input.value = text;
  const saveButton = h('button', { type: 'submit', class: 'btn btn-primary btn-small', text: 'Save and regenerate' });
  const form = h('form', { class: 'edit-form' }, input, h('div', { class: 'edit-actions' },
    h('button', { type: 'button', class: 'btn btn-quiet btn-small', text: 'Cancel', onClick: cancel }),
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
