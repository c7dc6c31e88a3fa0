// Small DOM helpers. Text always goes in as text nodes: nothing here ever parses HTML.
import { LOCALE, t } from './i18n.js';

/** Creates an element; `attrs` keys: class, text, dataset, onEvent handlers, any attribute. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** The element with `id` (throws early when a template and a script disagree). */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el;
}

/** Up to two initials for an avatar ("Ada Lovelace" → "AL"). */
export function initials(name) {
  const parts = String(name || '?').trim().split(/\s+/).filter(Boolean);
  return (parts.slice(0, 2).map((part) => part[0]).join('') || '?').toUpperCase();
}

const DATE_TIME = new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeStyle: 'short' });
const RELATIVE = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' });

/** "12 May 2025, 14:03" for an ISO timestamp. */
export function formatDateTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso ?? '') : DATE_TIME.format(date);
}

const TIME = new Intl.DateTimeFormat(LOCALE, { timeStyle: 'short' });
const DAY_TIME = new Intl.DateTimeFormat(LOCALE, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });

/** "14:03" for a time today, "12 May, 14:03" for another day. */
export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return (date.toDateString() === new Date().toDateString() ? TIME : DAY_TIME).format(date);
}

const UNITS = [['second', 1, 60], ['minute', 60, 60], ['hour', 3600, 24], ['day', 86400, 7]];

/** "5 minutes ago" for an ISO timestamp (falls back to the date after a week). */
export function formatRelative(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const seconds = (date.getTime() - Date.now()) / 1000;
  if (Math.abs(seconds) < 45) return t('common.time.just_now');
  for (const [unit, size, count] of UNITS) {
    const value = Math.round(seconds / size);
    if (Math.abs(value) < count) return RELATIVE.format(value, unit);
  }
  return formatDateTime(iso);
}
