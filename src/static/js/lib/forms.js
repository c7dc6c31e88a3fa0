// Form limits and errors for people. The limits come from the server (`GET /api/limits`, the
// values its checks use), so the browser never disagrees with the API; fields name themselves by
// their visible label, never by their JSON key.
import { api } from './api.js';
import { t } from './i18n.js';

let limits = null;

/** Fetches the limits once and puts them on every `[data-limit="form.field"]` control. */
export async function applyLimits(root = document) {
  limits ??= api.get('/api/limits');
  const all = await limits;
  root.querySelectorAll('[data-limit]').forEach((el) => {
    const [form, field] = el.dataset.limit.split('.');
    const rule = all?.[form]?.[field];
    if (!rule) return;
    if ('min' in rule) {
      el.min = String(rule.min);
      el.max = String(rule.max);
    }
    if ('max_length' in rule) el.maxLength = rule.max_length;
  });
}

/** The label a person sees for `el` (without hints in parentheses). */
export function labelOf(el) {
  const label = el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null;
  if (!label) return el.name || t('common.forms.this_field');
  const copy = label.cloneNode(true);
  copy.querySelectorAll('.muted').forEach((hint) => hint.remove());
  return copy.textContent.trim();
}

/** The first control of `form` outside its limits: `{el, message}`, or null when all fit. */
export function limitProblem(form) {
  for (const el of form.querySelectorAll('[data-limit]')) {
    const label = labelOf(el);
    if (el.type === 'number' && el.min !== '') {
      const value = Number(el.value);
      if (el.value.trim() === '' || !Number.isInteger(value) || value < Number(el.min) || value > Number(el.max)) {
        return { el, message: t('common.forms.whole_number', { label, min: el.min, max: el.max }) };
      }
    } else if (el.maxLength > 0 && el.value.trim().length > el.maxLength) {
      return { el, message: t('common.forms.too_long', { label, max: el.maxLength }) };
    }
  }
  return null;
}

/** A server error in words: "context_limit: must be …" becomes "Context limit must be …". */
export function errorInWords(err, form) {
  const field = err?.data?.error?.field;
  const el = field ? form.querySelector(`[name="${CSS.escape(field)}"]`) : null;
  if (!el) return err.message;
  const prefix = `${field}: `;
  const rule = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  const detail = rule.replace('an integer', 'a whole number').replace(/\.$/, '');  // i18n-ignore: the server's English
  return t('common.forms.rejected', { label: labelOf(el), detail });
}

/** Empties `target` and takes the invalid marks off `form`'s controls. */
export function clearProblems(form, target) {
  target.textContent = '';
  form.querySelectorAll('[aria-invalid]').forEach((el) => el.removeAttribute('aria-invalid'));
}

/** Clears earlier problems, then shows the first control of `form` outside its limits in
 * `target`, focused. True when everything fits. */
export function withinLimits(form, target) {
  clearProblems(form, target);
  const problem = limitProblem(form);
  if (problem) showProblem(target, problem.el, problem.message);
  return !problem;
}

/** Marks `el` invalid, focuses it and shows `message` in `target`. */
export function showProblem(target, el, message) {
  target.textContent = message;
  if (el) {
    el.setAttribute('aria-invalid', 'true');
    el.focus();
  }
}
