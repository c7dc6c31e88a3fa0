// A line-based three-way merge (diff3): what changed from `base` to `saved` and from `base` to
// `mine` is combined; changes that touch different lines merge on their own, changes to the same
// lines (or insertions at the same place) become conflicts the person resolves. Nothing is
// dropped silently: every chunk says where its lines came from and what they replaced.

/** Splits text into lines without their terminators ("a\n" → ["a", ""]), so joins round-trip. */
export function splitLines(text) {
  return String(text ?? '').split('\n');
}

/** Index pairs [i, j] of a longest common subsequence of the line arrays `a` and `b`. */
export function matchLines(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA -= 1; endB -= 1; }
  const pairs = [];
  for (let i = 0; i < start; i += 1) pairs.push([i, i]);
  lcsMiddle(a, b, start, endA, endB).forEach((pair) => pairs.push(pair));
  for (let i = endA, j = endB; i < a.length; i += 1, j += 1) pairs.push([i, j]);
  return pairs;
}

// Beyond this many cells the middle is left unmatched: it becomes one hunk the person sees whole
// (nothing is dropped), instead of a table that could exhaust the tab's memory.
const MAX_CELLS = 4_000_000;

function lcsMiddle(a, b, start, endA, endB) {
  const n = endA - start;
  const m = endB - start;
  if (!n || !m || n * m > MAX_CELLS) return [];
  const table = new Uint32Array((n + 1) * (m + 1));
  const at = (i, j) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[at(i, j)] = a[start + i] === b[start + j] ? table[at(i + 1, j + 1)] + 1
        : Math.max(table[at(i + 1, j)], table[at(i, j + 1)]);
    }
  }
  const pairs = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[start + i] === b[start + j]) { pairs.push([start + i, start + j]); i += 1; j += 1; }
    else if (table[at(i + 1, j)] >= table[at(i, j + 1)]) i += 1;
    else j += 1;
  }
  return pairs;
}

function baseToOther(base, other) {
  const map = new Array(base.length).fill(-1);
  matchLines(base, other).forEach(([i, j]) => { map[i] = j; });
  return map;
}

function sameLines(x, y) {
  return x.length === y.length && x.every((line, i) => line === y[i]);
}

/** Classifies one unstable region: taken from one side, the same on both, or a conflict. */
function regionChunk(base, saved, mine) {
  if (!base.length && !saved.length && !mine.length) return null;
  if (sameLines(saved, mine)) return { kind: 'both', lines: saved, base };
  if (sameLines(base, saved)) return { kind: 'mine', lines: mine, base };
  if (sameLines(base, mine)) return { kind: 'saved', lines: saved, base };
  return { kind: 'conflict', base, saved, mine };
}

/**
 * Merges the texts. Returns chunks in order: `{kind: 'same', lines}`, `{kind: 'saved' | 'mine' |
 * 'both', lines, base}` (auto-merged: the lines taken, and the base lines they replaced) and
 * `{kind: 'conflict', base, saved, mine}`.
 */
export function merge3(baseText, savedText, mineText) {
  const base = splitLines(baseText);
  const saved = splitLines(savedText);
  const mine = splitLines(mineText);
  const toSaved = baseToOther(base, saved);
  const toMine = baseToOther(base, mine);
  const chunks = [];
  const push = (chunk) => {
    if (!chunk) return;
    const last = chunks.at(-1);
    if (chunk.kind === 'same' && last?.kind === 'same') last.lines.push(...chunk.lines);
    else chunks.push(chunk);
  };
  let i = 0;
  let s = 0;
  let m = 0;
  for (;;) {
    const stable = [];
    while (i < base.length && toSaved[i] === s && toMine[i] === m) {
      stable.push(base[i]); i += 1; s += 1; m += 1;
    }
    if (stable.length) push({ kind: 'same', lines: stable });
    let k = i;
    while (k < base.length && (toSaved[k] < 0 || toMine[k] < 0)) k += 1;
    const endS = k < base.length ? toSaved[k] : saved.length;
    const endM = k < base.length ? toMine[k] : mine.length;
    push(regionChunk(base.slice(i, k), saved.slice(s, endS), mine.slice(m, endM)));
    if (k >= base.length) break;
    i = k; s = endS; m = endM;
  }
  return chunks;
}

/** The lines a conflict resolves to: 'both' (saved, then mine), 'saved' or 'mine'. */
export function resolveConflict(chunk, choice) {
  if (choice === 'saved') return chunk.saved;
  if (choice === 'mine') return chunk.mine;
  return [...chunk.saved, ...chunk.mine];
}

/** The merged text; `choices[n]` resolves the n-th conflict (default 'both'). */
export function mergedText(chunks, choices = []) {
  const lines = [];
  let conflict = 0;
  chunks.forEach((chunk) => {
    if (chunk.kind === 'conflict') {
      lines.push(...resolveConflict(chunk, choices[conflict] || 'both'));
      conflict += 1;
    } else lines.push(...chunk.lines);
  });
  return lines.join('\n');
}

/** How many conflicts the chunks hold. */
export function conflictCount(chunks) {
  return chunks.filter((chunk) => chunk.kind === 'conflict').length;
}
