// Personas: a card per persona, one form for creating and editing, deletion after a confirmation.
import { api, listOf, seg } from '../lib/api.js';
import { byId, h } from '../lib/dom.js';
import { icon } from '../lib/icons.js';
import { errorInWords, limitProblem, showProblem } from '../lib/forms.js';
import { avatar } from '../lib/persona_view.js';
import { confirmAction, toast } from '../lib/ui.js';
import { AvatarControls, CardImport, exportControls } from './cards.js';

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
        type: 'button', class: 'btn btn-quiet btn-small', 'aria-label': `Edit ${persona.name}`,
        onClick: () => this.openForm(persona),
      }, icon('pencil', 14), 'Edit')];
      if (persona.id !== 'default') {
        actions.push(h('button', {
          type: 'button', class: 'btn btn-danger-quiet btn-small', 'aria-label': `Delete ${persona.name}`,
          onClick: () => this.remove(persona),
        }, icon('trash', 14), 'Delete'));
      }
      return h('li', { class: 'card persona-card', dataset: { personaId: persona.id } },
        h('div', { class: 'persona-card-head' },
          avatar(persona, 36),
          h('h3', { text: persona.name }),
          persona.id === 'default' ? h('span', { class: 'badge', text: 'Default' }) : null),
        h('p', { text: persona.description || 'No description yet.' }),
        h('div', { class: 'persona-card-actions' }, actions), exportControls(persona));
    }));
  }

  openForm(persona) {
    this.editing = persona;
    this.error.textContent = '';
    byId('persona-form-heading').textContent = persona ? `Edit ${persona.name}` : 'New persona';
    byId('persona-save').textContent = persona ? 'Save changes' : 'Create persona';
    for (const [name, id] of Object.entries(FIELDS)) {
      byId(id).value = persona ? (persona[name] ?? '') : (name === 'language' ? 'en' : '');
    }
    byId('p-use-card-prompts').checked = persona ? persona.use_card_prompts !== false : true;
    this.avatarControls.show(persona);
    this.form.hidden = false;
    this.form.scrollIntoView({ block: 'nearest' });
    byId('p-name').focus();
  }

  closeForm() {
    this.form.hidden = true;
    this.editing = null;
    byId('persona-new').focus();
  }

  async save() {
    const body = {};
    for (const [name, id] of Object.entries(FIELDS)) body[name] = byId(id).value;
    body.name = body.name.trim();
    body.use_card_prompts = byId('p-use-card-prompts').checked;
    if (!body.name) {
      this.error.textContent = 'Give the persona a name.';
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
        toast(`${body.name} saved`);
      } else {
        await api.post('/api/personas', body);
        toast(`${body.name} created`);
      }
    } catch (err) {
      this.error.textContent = errorInWords(err, this.form);
      return;
    }
    this.closeForm();
    await this.load();
  }

  async remove(persona) {
    const ok = await confirmAction(
      `${persona.name}, all conversations with them and their whole memory (cortex files and `
      + 'history) will be deleted. This cannot be undone.',
      { title: `Delete ${persona.name}?`, confirm: 'Delete persona' },
    );
    if (!ok) return;
    try {
      await api.del(`/api/personas/${seg(persona.id)}`);
    } catch (err) {
      toast(err.message, { error: true });
      return;
    }
    toast(`${persona.name} deleted`);
    await this.load();
  }
}
