// Whether the page is being left. A reload or a navigation cuts off the old page's requests and
// its socket, and the browser reports those as network failures; they are not failures the
// person should be told about ("the server could not be reached") while the page goes away.
// `pagehide` means the page is gone; `beforeunload` only that it may go (a cancelled leave or a
// download keeps it), so that mark expires after a grace period.

const GRACE_MS = 3000;
let hidden = false;
let maybeUntil = 0;

window.addEventListener('beforeunload', () => { maybeUntil = performance.now() + GRACE_MS; });
window.addEventListener('pagehide', () => { hidden = true; });
window.addEventListener('pageshow', () => { hidden = false; maybeUntil = 0; });

/** True while the page is being left (reload, navigation away). */
export function isLeaving() {
  return hidden || performance.now() < maybeUntil;
}

/** Resolves when a failure seen now should be reported: at once normally; while the page is
 * being left only if it is still here after the grace period (in a page that is gone, never). */
export function unlessLeaving() {
  if (!isLeaving()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => (isLeaving() ? setTimeout(check, GRACE_MS) : resolve());
    setTimeout(check, GRACE_MS);
  });
}
