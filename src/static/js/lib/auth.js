// Losing the sign-in (cookie expired, access token changed): the server answers 401, and the
// page sends the person to /signin, which brings them back here afterwards (`next`).

const hooks = [];
let leaving = false;

/** Registers `fn` to run just before the page leaves for the sign-in page (e.g. save a draft). */
export function beforeSignIn(fn) {
  hooks.push(fn);
}

/** The sign-in page, asked to return to the current path and query afterwards. */
export function signInUrl() {
  const here = `${window.location.pathname}${window.location.search}`;
  return `/signin?next=${encodeURIComponent(here).replaceAll('%2F', '/')}`;
}

/** Leaves for the sign-in page once; waits a task so callers can first put back what they hold. */
export function requireSignIn() {
  if (leaving) return;
  leaving = true;
  setTimeout(() => {
    for (const fn of hooks) {
      try {
        fn();
      } catch {
        // A failing hook must not keep the person on a page that no longer works.
      }
    }
    window.location.assign(signInUrl());
  }, 0);
}
