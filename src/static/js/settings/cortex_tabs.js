// The cortex editor's furniture: the file tabs (keyboard moves, unsaved and merge markers) and
// the size meter against the file's budget.
import { LOCALE, t } from '../lib/i18n.js';

const NUMBER = new Intl.NumberFormat(LOCALE);

/** Arrow keys, Home and End move between the tabs and select the file (`select(filename)`). */
export function moveTab(event, tabs, select) {
  const index = tabs.indexOf(event.currentTarget);
  const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const next = tabs[(moves[event.key] + tabs.length) % tabs.length];
  next.focus();
  select(next.dataset.file);
}

/** Marks tabs with unsaved edits (a dot) and those waiting for a merge. */
export function markTabs(tabs, files, isDirty) {
  tabs.forEach((tab) => {
    const dirty = isDirty(tab.dataset.file);
    let dot = tab.querySelector('.dirty-dot');
    if (dirty && !dot) {
      dot = document.createElement('span');
      dot.className = 'dirty-dot';
      dot.title = t('settings.cortex.unsaved_title');
      tab.append(dot);
    } else if (!dirty && dot) dot.remove();
    const merge = Boolean(files[tab.dataset.file]?.incoming);
    tab.classList.toggle('tab-merge', merge);
    tab.setAttribute('aria-description', merge ? t('settings.cortex.merge_needed')
      : (dirty ? t('settings.cortex.unsaved') : ''));
  });
}

/** Shows `chars` against the budget, with what happens when it is exceeded. */
export function updateMeter(meter, count, chars, budget) {
  const limit = budget || 12000;
  meter.max = limit;
  meter.low = Math.round(limit * 0.75);
  meter.high = Math.round(limit * 0.95);
  meter.optimum = 0;
  meter.value = Math.min(chars, limit);
  let text = t('settings.editor.count', { chars: NUMBER.format(chars), limit: NUMBER.format(limit) });
  if (chars > limit * 4) text += ` — ${t('settings.editor.over_hard_limit')}`;
  else if (chars > limit) text += ` — ${t('settings.editor.over_budget')}`;
  count.textContent = text;
  count.classList.toggle('meter-over', chars > limit);
}
