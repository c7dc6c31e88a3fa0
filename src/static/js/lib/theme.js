// The manual theme (system, light or dark). The choice lives in a cookie so the server renders
// `<html data-theme>` before any CSS paints (no flash, no inline script needed under the CSP).
const THEMES = ['light', 'dark'];
const YEAR = 365 * 24 * 3600;

/** "system", "light" or "dark": what the page shows now. */
export function currentTheme() {
  const theme = document.documentElement.dataset.theme;
  return THEMES.includes(theme) ? theme : 'system';
}

/** Applies `choice` at once and remembers it for every page of this browser. */
export function setTheme(choice) {
  const root = document.documentElement;
  if (THEMES.includes(choice)) {
    root.dataset.theme = choice;
    document.cookie = `theme=${choice}; Path=/; Max-Age=${YEAR}; SameSite=Lax`;
  } else {
    delete root.dataset.theme;
    document.cookie = 'theme=; Path=/; Max-Age=0; SameSite=Lax';
  }
}
