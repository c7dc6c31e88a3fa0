// "About you": the person's user personas (name, description, picture), which one is the
// default, and one form to add or edit them (docs/about-you.md).
import { api, listOf, seg, sendFile } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { avatar } from '../lib/persona_view.js';
import { confirmAction, toast } from '../lib/ui.js';
import { t } from '../lib/i18n.js';

/** The "About you" section of the settings page. */
export class AboutYouSettings {
  constructor({ onChange } = {}) {
    this.onChange = onChange || (() => {});
    this.form = byId('up-form');
    this.items = [];
    this.editing = null;
    byId('up-new').addEventListener('click', () => this.open(null));
    byId('up-cancel').addEventListener('click', () => this.close());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    byId('up-avatar-file').addEventListener('change', (event) => this.upload(event.target));
    byId('up-avatar-remove').addEventListener('click', () => this.run(async () => {
      this.showAvatar(await api.del(`/api/user-personas/${seg(this.editing.id)}/avatar`));
      await this.load();
    }));
  }

  async load() {
    this.items = listOf(await api.get('/api/user-personas'), 'user_personas');
    byId('up-empty').hidden = this.items.length > 0;
    byId('user-personas').replaceChildren(...this.items.map((item) => this.card(item)));
    await this.onChange(this.items);
  }

  card(item) {
    const actions = [h('button', { type: 'button', class: 'btn btn-small', text: t('settings.about.edit'),
      'aria-label': t('settings.about.edit_named', { name: item.name }), onclick: () => this.open(item) })];
    if (!item.is_default) {
      actions.push(h('button', { type: 'button', class: 'btn btn-small', text: t('settings.about.make_default'),
        'aria-label': t('settings.about.make_default_named', { name: item.name }),
        onclick: () => this.run(() => this.makeDefault(item)) }));
    }
    actions.push(h('button', { type: 'button', class: 'btn btn-small btn-danger', text: t('settings.about.delete'),
      'aria-label': t('settings.about.delete_named', { name: item.name }),
      onclick: () => this.run(() => this.remove(item)) }));
    const head = [avatar(item, 30), h('h3', { text: item.name })];
    if (item.is_default) head.push(h('span', { class: 'badge', text: t('settings.about.default') }));
    return h('li', { class: 'card persona-card', 'data-user-persona': String(item.id) },
      h('div', { class: 'persona-card-head' }, ...head),
      item.description ? h('p', { class: 'muted', text: item.description }) : null,
      h('div', { class: 'persona-card-actions' }, ...actions));
  }

  open(item) {
    this.editing = item;
    byId('up-form-heading').textContent = item ? t('settings.about.edit_named', { name: item.name }) : t('settings.about.new');
    byId('up-name').value = item ? item.name : '';
    byId('up-description').value = item ? item.description : '';
    byId('up-error').textContent = '';
    this.showAvatar(item);
    this.form.hidden = false;
    byId('up-name').focus();
  }

  close() {
    this.form.hidden = true;
    this.editing = null;
  }

  showAvatar(item) {
    byId('up-avatar-row').hidden = !item;
    if (!item) return;
    byId('up-avatar-view').replaceChildren(avatar(item, 40));
    byId('up-avatar-remove').hidden = !item.avatar_url;
  }

  async save() {
    const problem = limitProblem(this.form);
    if (problem) {
      showProblem(byId('up-error'), problem.el, problem.message);
      return;
    }
    const body = { name: byId('up-name').value.trim(), description: byId('up-description').value };
    try {
      if (this.editing) await api.patch(`/api/user-personas/${seg(this.editing.id)}`, body);
      else await api.post('/api/user-personas', body);
      this.close();
      toast(t('settings.about.saved'));
      await this.load();
    } catch (err) {
      byId('up-error').textContent = errorInWords(err, this.form);
    }
  }

  async makeDefault(item) {
    await api.put('/api/user-personas/default', { id: item.id });
    await this.load();
  }

  async remove(item) {
    const ok = await confirmAction(t('settings.about.delete_text', { name: item.name }),
      { title: t('settings.about.delete_title') });
    if (!ok) return;
    await api.del(`/api/user-personas/${seg(item.id)}`);
    if (this.editing && this.editing.id === item.id) this.close();
    await this.load();
  }

  async upload(input) {
    const file = input.files[0];
    input.value = '';
    if (!file || !this.editing) return;
    await this.run(async () => {
      this.editing = await sendFile('PUT', `/api/user-personas/${seg(this.editing.id)}/avatar`, file);
      this.showAvatar(this.editing);
      await this.load();
    });
  }

  async run(action) {
    try {
      await action();
    } catch (err) {
      toast(err.message, { error: true });
    }
  }
}
