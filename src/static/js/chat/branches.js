// Alternatives at one position of the conversation ("swipes"): `< 2/3 >` under a message whose
// `siblings` hold more than one id. Switching asks the server to make that branch active.
import { h } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

/** The `< n/m >` control for `message`, or null when it has no alternatives. */
export function siblingNav(message, onSwitch) {
  const ids = Array.isArray(message.siblings) ? message.siblings : [];
  const at = ids.indexOf(message.id);
  if (ids.length < 2 || at < 0) return null;
  const step = (delta, label, text) => h('button', {
    type: 'button', class: 'msg-action sibling-step', 'aria-label': label, text,
    disabled: at + delta < 0 || at + delta >= ids.length,
    onClick: () => onSwitch(ids[at + delta]),
  });
  return h('span', { class: 'sibling-nav', role: 'group', 'aria-label': t('chat.branches.label') },
    step(-1, t('chat.branches.previous'), '<'),
    h('span', { class: 'sibling-count', text: `${at + 1}/${ids.length}` }),
    step(1, t('chat.branches.next'), '>'));
}
