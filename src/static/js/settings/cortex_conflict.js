// The conflict view: the file changed on the server since it was opened (a 412 on save). Both
// versions side by side; the person keeps theirs (after editing it into a merge, if they like)
// or takes the saved one.
import { byId } from '../lib/dom.js';

/** Shows a save conflict and reports the person's choice through `keepMine` / `takeTheirs`. */
export class ConflictView {
  constructor({ hide, keepMine, takeTheirs }) {
    this.root = byId('conflict');
    this.hide = hide;
    this.theirs = null;
    byId('conflict-keep-mine').addEventListener('click', () => {
      if (this.theirs) keepMine(byId('conflict-mine').value, this.theirs);
    });
    byId('conflict-take-theirs').addEventListener('click', () => {
      if (this.theirs) takeTheirs(this.theirs);
    });
  }

  /** Opens the view: `mine` was based on `baseRevision`, `current` is the file as saved now. */
  open(baseRevision, current, mine) {
    this.theirs = { ...current, etag: `"${current.revision}"` };
    byId('conflict-info').textContent = `You started from revision ${baseRevision}; `
      + `revision ${current.revision} was saved in the meantime (for example by a memory update). `
      + 'Keep your version, take the saved one, or edit your version into a merge.';
    byId('conflict-theirs-label').textContent = `Saved version (revision ${current.revision})`;
    byId('conflict-mine').value = mine;
    byId('conflict-theirs').value = current.content;
    this.root.hidden = false;
    this.hide.forEach((el) => { el.hidden = true; });
    const heading = byId('conflict-heading');
    heading.tabIndex = -1;
    heading.focus();
  }

  close() {
    this.theirs = null;
    this.root.hidden = true;
    this.hide.forEach((el) => { el.hidden = false; });
  }
}
