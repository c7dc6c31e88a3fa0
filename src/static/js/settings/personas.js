// Personas: a card per persona, one form for creating and editing, deletion after a confirmation.
import { api, listOf, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { icon } from '../lib/icons.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { PERSON_NAME_CHANGED, avatar, cardText } from '../lib/persona_view.js';
import { confirmedDelete, toast } from '../lib/ui.js';
import { AvatarControls, CardImport, exportControls } from './cards.js';
import { WorldSettings } from './world.js';
import { LANG, t } from '../lib/i18n.js';

const FIELDS = { name: 'p-name', user_name: 'p-user-name', language: 'p-language',
  description: 'p-description', greeting: 'p-greeting', personality: 'p-personality',
  scenario: 'p-scenario', example_dialogue: 'p-example', system_prompt: 'p-system-prompt',
  post_history_instructions: 'p-post-history', creator_notes: 'p-creator-notes' };

/** The personas section; calls `onChange(personas)` whenever the list changes. */
export class PersonaSettings {
  constructor({ onChange }) {
    this.onChange = onChange;
    this.list = byId('persona-cards');
    this.form = byId('persona-form');
    this.error = byId('persona-error');
    this.personas = [];
    this.editing = null;
    this.cards = new CardImport({ onImported: () => this.load() });
    this.avatarControls = new AvatarControls({ onChange: () => this.load() });
    this.world = new WorldSettings();
    document.addEventListener(PERSON_NAME_CHANGED, () => this.render());
    byId('persona-new').addEventListener('click', () => this.openForm(null));
    byId('persona-cancel').addEventListener('click', () => this.closeForm());
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.save(); });
    this.form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') this.closeForm();
    });
  }

  async load() {
    this.personas = listOf(await api.get('/api/personas'), 'personas');
    this.render();
    await this.onChange(this.personas);
  }

  render() {
    this.list.replaceChildren(...this.personas.map((persona) => {
      const actions = [h('button', {
        type: 'button', class: 'btn btn-quiet btn-small', 'aria-label': t('settings.personas.edit_label', { name: persona.name }),
        onClick: () => this.openForm(persona),
      }, icon('pencil', 14), t('settings.personas.edit'))];
      if (persona.id !== 'default') {
        actions.push(h('button', {
          type: 'button', class: 'btn btn-danger-quiet btn-small', 'aria-label': t('settings.personas.delete_label', { name: persona.name }),
          onClick: () => this.remove(persona),
        }, icon('trash', 14), t('settings.personas.delete')));
      }
      return h('li', { class: 'card persona-card', dataset: { personaId: persona.id } },
        h('div', { class: 'persona-card-head' },
          avatar(persona, 36),
          h('h3', { text: persona.name }),
          persona.id === 'default' ? h('span', { class: 'badge', text: t('settings.personas.default_badge') }) : null),
        h('p', { text: cardText(persona.description, persona) || t('settings.personas.no_description') }),
        h('div', { class: 'persona-card-actions' }, actions), exportControls(persona));
    }));
  }

  openForm(persona) {
    this.editing = persona;
    this.error.textContent = '';
    byId('persona-form-heading').textContent = persona ? t('settings.personas.edit_label', { name: persona.name }) : t('settings.personas.new');
    byId('persona-save').textContent = persona ? t('settings.personas.save_changes') : t('settings.personas.create');
    for (const [name, id] of Object.entries(FIELDS)) {
      byId(id).value = persona ? (persona[name] ?? '') : (name === 'language' ? LANG : '');
    }
    byId('p-use-card-prompts').checked = persona ? persona.use_card_prompts !== false : true;
    this.avatarControls.show(persona);
    this.world.show(persona).catch((err) => toast(err.message, { error: true }));
    this.form.hidden = false;
    this.form.scrollIntoView({ block: 'nearest' });
    byId('p-name').focus();
  }

  closeForm() {
    this.form.hidden = true;
    this.world.hide();
    this.editing = null;
    byId('persona-new').focus();
  }

  async save() {
    const body = {};
    for (const [name, id] of Object.entries(FIELDS)) body[name] = byId(id).value;
    body.name = body.name.trim();
    body.use_card_prompts = byId('p-use-card-prompts').checked;
    if (!body.name) {
      this.error.textContent = t('settings.personas.name_missing');
      byId('p-name').focus();
      return;
    }
    const problem = limitProblem(this.form);
    if (problem) {
      showProblem(this.error, problem.el, problem.message);
      return;
    }
    try {
      if (this.editing) {
        await api.put(`/api/personas/${seg(this.editing.id)}`, body);
        toast(t('settings.personas.saved', { name: body.name }));
      } else {
        const created = await api.post('/api/personas', body);
        if (!(await this.addPicture(created))) return;
        toast(t('settings.personas.created', { name: body.name }));
      }
    } catch (err) {
      this.error.textContent = errorInWords(err, this.form);
      return;
    }
    this.closeForm();
    await this.load();
  }

  /** The picture chosen in the new persona's form, sent once the persona exists. A refused one
   * leaves the persona without it: the form turns into its edit form with the reason. */
  async addPicture(created) {
    try {
      await this.avatarControls.commit(created);
      return true;
    } catch (err) {
      await this.load();
      this.openForm(created);
      this.error.textContent = t('settings.personas.picture_refused', { name: created.name, reason: err.message });
      return false;
    }
  }

  async remove(persona) {
    const done = await confirmedDelete(
      t('settings.personas.delete_text', { name: persona.name }),
      { title: t('settings.personas.delete_title', { name: persona.name }), confirm: t('settings.personas.delete_confirm') },
      `/api/personas/${seg(persona.id)}`,
    );
    if (!done) return;
    toast(t('settings.personas.deleted', { name: persona.name }));
    await this.load();
  }
}
