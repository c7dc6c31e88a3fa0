// The interface's strings. The page embeds its language's catalogue (src/instructions/ui/<lang>.json)
// as JSON text in an inert `<template id="ui-strings">` (no script tag: the pages carry no inline
// script at all); `t` looks a key up and fills `{name}` placeholders, `tn` picks the plural form
// (`key.one`, `key.other`, … by Intl.PluralRules).

const STRINGS = readStrings();

/** The interface language ("en" or "de"), from `<html lang>`. */
export const LANG = document.documentElement.lang || 'en';

/** The locale for dates and numbers: the browser's own variant of LANG (en-GB, de-AT), else LANG. */
export const LOCALE = (navigator.languages || []).find((tag) => tag.split('-')[0] === LANG) || LANG;

const PLURALS = new Intl.PluralRules(LANG);

function readStrings() {
  const block = document.getElementById('ui-strings');
  try {
    return block ? JSON.parse(block.content.textContent) : {};
  } catch {
    return {};
  }
}

/** The string for `key` with `{name}` placeholders filled from `params`. */
export function t(key, params = {}) {
  const text = STRINGS[key];
  if (typeof text !== 'string') {
    console.error(`Missing interface string: ${key}`);
    return key;
  }
  return text.replace(/\{([a-z_][a-z0-9_]*)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** The plural form of `key` for `count` (`{count}` is filled in too). */
export function tn(key, count, params = {}) {
  const form = `${key}.${PLURALS.select(count)}`;
  return t(form in STRINGS ? form : `${key}.other`, { count, ...params });
}

/** The message for a server error. The server writes English; in another language the
 * catalogue's `errors.<code>` (filled from the error's details) replaces it when there is one. */
export function errorMessage(code, fallback, details = {}) {
  if (LANG === 'en' && fallback) return fallback;
  return has(`errors.${code}`) ? t(`errors.${code}`, details) : fallback;
}

/** True when `key` exists (for optional strings, such as messages for known error codes). */
export function has(key) {
  return typeof STRINGS[key] === 'string';
}
