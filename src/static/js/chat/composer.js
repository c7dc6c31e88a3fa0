// The message box: grows with its text, Enter sends, Shift+Enter adds a line, Stop while streaming.
// On touch screens (no fine pointer) Enter adds a line and the Send button sends, as on ChatGPT's
// mobile web: an on-screen keyboard has no Shift+Enter.
import { byId } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

const MAX_HEIGHT_PX = 220;
const FINE_POINTER = window.matchMedia('(pointer: fine)');

/** True when this key press should send (Enter on a keyboard-and-mouse device, not Shift+Enter). */
export function enterSends(event) {
  return event.key === 'Enter' && !event.shiftKey && !event.isComposing && FINE_POINTER.matches;
}

/** The composer form at the bottom of the chat. */
export class Composer {
  constructor({ onSend, onStop }) {
    this.form = byId('composer');
    this.input = byId('composer-input');
    this.send = byId('send');
    this.stop = byId('stop');
    this.streaming = false;
    this.locked = false;
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit(onSend);
    });
    this.input.addEventListener('keydown', (event) => {
      if (enterSends(event)) {
        event.preventDefault();
        this.submit(onSend);
      }
    });
    this.input.addEventListener('input', () => this.resize());
    this.stop.addEventListener('click', () => onStop());
    this.input.enterKeyHint = FINE_POINTER.matches ? 'send' : 'enter';
    if (!FINE_POINTER.matches) byId('composer-hint').textContent = t('chat.composer.hint_touch');
  }

  submit(onSend) {
    const text = this.input.value;
    if (this.streaming || this.locked || !text.trim()) return;
    this.setText('');
    onSend(text);
  }

  /** The text currently typed. */
  text() {
    return this.input.value;
  }

  /** Replaces the typed text. */
  setText(text) {
    this.input.value = text;
    this.resize();
  }

  /** Puts back text that could not be sent, unless the person has typed something new. */
  restore(text) {
    if (!this.input.value.trim()) this.setText(text);
  }

  /** Keeps the typed text in this tab's sessionStorage under `key`, e.g. across signing in. */
  saveDraft(key) {
    if (!this.input.value.trim()) return;
    try {
      window.sessionStorage.setItem(key, this.input.value);
    } catch {
      // Storage can be full or disabled; the draft is then lost as it would be without it.
    }
  }

  /** Puts back (once) a draft saved under `key`, unless something new has been typed. */
  restoreDraft(key) {
    let text = null;
    try {
      text = window.sessionStorage.getItem(key);
      window.sessionStorage.removeItem(key);
    } catch {
      return;
    }
    if (text !== null) this.restore(text);
  }

  /** Switches between Send and Stop while a reply streams. */
  setStreaming(streaming) {
    this.streaming = streaming;
    this.stop.hidden = !streaming;
    this.stop.disabled = false;
    this.send.hidden = streaming;
    this.refresh();
  }

  /** Disables sending (no API key yet), with the reason as the placeholder. */
  setLocked(locked, reason = '') {
    this.locked = locked;
    this.input.placeholder = locked ? reason : t('chat.composer.placeholder');
    this.refresh();
  }

  refresh() {
    this.send.disabled = this.locked || this.streaming;
    this.input.disabled = this.locked;
  }

  /** Focuses the message box, except on touch screens where that would pop up the keyboard. */
  focus() {
    if (FINE_POINTER.matches) this.input.focus();
  }

  resize() {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, MAX_HEIGHT_PX)}px`;
  }
}
