// Keeping the keyboard inside a panel that covers the page (the phone drawer): Tab and Shift+Tab
// wrap around its controls instead of leaving for the page behind it, which is made inert.

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]';

/** The controls in `container` that Tab stops at, in order. */
export function tabStops(container) {
  return [...container.querySelectorAll(FOCUSABLE)].filter((el) => el.tabIndex >= 0
    && !el.disabled && !el.closest('[inert]') && el.checkVisibility({ visibilityProperty: true }));
}

/** On Tab, moves the focus round to the other end of `container` instead of out of it. */
export function wrapTab(container, event) {
  const stops = tabStops(container);
  if (!stops.length) return;
  const first = stops[0];
  const last = stops[stops.length - 1];
  const inside = container.contains(document.activeElement);
  if (event.shiftKey && (!inside || document.activeElement === first)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (!inside || document.activeElement === last)) {
    event.preventDefault();
    first.focus();
  }
}
