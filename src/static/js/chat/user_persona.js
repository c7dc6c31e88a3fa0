// Who the person is in the open conversation: a picker of the user personas ("About you") in
// the chat header. A session without a choice follows the default (docs/about-you.md).
import { api, listOf, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { setPersonName } from '../lib/persona_view.js';
import { t } from '../lib/i18n.js';

export class UserPersonaPicker {
  constructor({ onChanged, notify }) {
    this.onChanged = onChanged;
    this.notify = notify;
    this.items = [];
    this.session = null;
    this.select = byId('user-persona');
    this.box = byId('user-persona-box');
    this.select.addEventListener('change', () => this.choose());
  }

  async load() {
    this.items = listOf(await api.get('/api/user-personas'), 'user_personas');
  }

  /** Shows the picker for `session` (hidden without a session or without user personas). */
  render(session) {
    this.session = session;
    this.box.hidden = !session || !this.items.length;
    const fallback = this.items.find((item) => item.is_default);
    const options = [h('option', { value: '', text: fallback
      ? t('chat.user_persona.default', { name: fallback.name }) : t('chat.user_persona.none') })];
    for (const item of this.items) options.push(h('option', { value: String(item.id), text: item.name }));
    this.select.replaceChildren(...options);
    const chosen = session && this.items.find((item) => item.id === session.user_persona_id);
    this.select.value = chosen ? String(chosen.id) : '';
    const person = chosen || fallback;
    if (person) setPersonName(person.name);
  }

  async choose() {
    if (!this.session) return;
    const value = this.select.value ? Number(this.select.value) : null;
    try {
      const updated = await api.patch(`/api/sessions/${seg(this.session.id)}`, { user_persona_id: value });
      const named = this.items.find((item) => item.id === updated.user_persona_id)
        || this.items.find((item) => item.is_default);
      this.onChanged(updated);
      if (named) this.notify(t('chat.user_persona.changed', { name: named.name }));
    } catch (err) {
      this.notify(err.message, true);
      this.render(this.session);
    }
  }
}
