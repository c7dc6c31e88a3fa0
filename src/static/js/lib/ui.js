// Shared page furniture: the confirmation dialog (and a delete behind it) and a short-lived
// status toast.
import { api } from './api.js';
import { byId } from './dom.js';
import { t } from './i18n.js';

/** Asks before something irreversible; resolves true when the person confirmed. */
export function confirmAction(text, { title = t('common.confirm.title'), confirm = t('common.confirm.delete') } = {}) {
  const dialog = byId('confirm-dialog');
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = confirm;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      if (opener && opener.isConnected) opener.focus();
    }, { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    byId('confirm-cancel').focus();
  });
}

/** Asks with `confirmAction(text, options)`, then sends `DELETE path`; a refusal is shown as an
 * error toast. Resolves to the server's answer, or null when cancelled or refused. */
export async function confirmedDelete(text, options, path) {
  if (!await confirmAction(text, options)) return null;
  try {
    return await api.del(path);
  } catch (err) {
    toast(err.message, { error: true });
    return null;
  }
}

let toastTimer = null;

/** Shows a brief message at the bottom of the screen (also read out by screen readers). */
export function toast(message, { error = false } = {}) {
  const el = byId('toast');
  el.textContent = message;
  el.classList.toggle('toast-error', error);
  el.classList.add('toast-visible');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove('toast-visible'), error ? 6000 : 3000);
}
