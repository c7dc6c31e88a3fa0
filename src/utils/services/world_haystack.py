"""The text a world info scan searches, and the work it may spend searching it.

A book of a thousand entries with 64 keys each, over a conversation of hundreds of long
messages, asks for tens of thousands of searches per turn; done naively (one search per entry
and key over a text rebuilt per scan depth, a Python loop over every candidate of a key with
punctuation) that stalled a gevent worker for minutes. Here each distinct key is searched once
per text, only as deep as an entry asks, in C where it can be, and every step is charged to a
`Work` limit, so a turn's scan is bounded whatever the books and the conversation hold.
"""
import re
from bisect import bisect_right
from itertools import accumulate

SCAN_WORK = 32_000_000  # characters searched per turn, at most (tens of milliseconds in C)
STEP_COST = 512  # one Python-level step (a key, a candidate), in characters searched
_SPACE = re.compile(r"\s")
_WORD = re.compile(r"\w+")


class Work:
    """What one turn's scan may still spend, in characters searched (a Python-level step counts
    as STEP_COST of them). Deterministic: the same books and messages always stop at the same
    point, so a turn's prompt stays reproducible."""

    def __init__(self, limit: int = SCAN_WORK):
        self.left = limit

    def spend(self, amount: int) -> bool:
        """Takes `amount`; False once the scan has spent all it may."""
        self.left -= amount
        return self.left >= 0

    @property
    def spent(self) -> bool:
        """Whether the limit was reached (what was left unsearched matched nothing)."""
        return self.left < 0


class Haystack:
    """Scan text made of parts (the messages, newest first, joined by a line break), folded by
    the caller unless case-sensitive. `where(key, …)` is the first part a key occurs in, found
    once per key however many entries carry it: one-word keys from an index of the parts'
    words, others by a search in C over the parts asked for so far."""

    def __init__(self, *parts: str, work: Work | None = None):
        self.text = "\n".join(parts)
        self._parts = parts
        self._ends = list(accumulate(len(part) + 1 for part in parts))
        self._work = work or Work()
        self._words: dict[str, int] = {}
        self._indexed = 0
        self._found: dict[tuple[str, bool], tuple[int | None, int]] = {}

    def where(self, key: str, whole_words: bool, depth: int | None = None) -> int | None:
        """The index of the first of the first `depth` parts (default: all) in which `key`
        occurs (as a whole word when asked and it has no space, else as a plain substring),
        or None."""
        depth = len(self._parts) if depth is None else min(depth, len(self._parts))
        whole = whole_words and not _SPACE.search(key)
        index, searched = self._found.get((key, whole), (None, 0))
        if index is None and searched < depth:
            index = self._search(key, whole, searched, depth)
            self._found[key, whole] = (index, depth)
        return index if index is not None and index < depth else None

    def _search(self, key: str, whole: bool, first: int, upto: int) -> int | None:
        """The first part in which `key` occurs, searching parts `first`..`upto` (those before
        `first` were searched already)."""
        if whole and _WORD.fullmatch(key):
            return self._word_index(upto).get(key)
        start = max(0, (self._ends[first - 1] if first else 0) - len(key))
        stop = self._ends[upto - 1] - 1
        end = self._find_whole(key, start, stop) if whole else self._find(key, start, stop)
        return None if end < 0 else bisect_right(self._ends, end - 1)

    def _word_index(self, upto: int) -> dict[str, int]:
        """Every maximal run of word characters of the first `upto` parts (at least), with the
        first part it occurs in."""
        for index in range(self._indexed, upto):
            part = self._parts[index]
            if not self._work.spend(len(part) + STEP_COST):
                break
            words = set(_WORD.findall(part))
            words.difference_update(self._words)
            self._words.update(dict.fromkeys(words, index))
            self._indexed = index + 1
        return self._words

    def _find(self, key: str, start: int, stop: int) -> int:
        """The end of the first occurrence of `key` within `start`..`stop`, or -1."""
        found = self.text.find(key, start, stop)
        self._work.spend((stop if found < 0 else found + len(key)) - start)
        return -1 if found < 0 or self._work.spent else found + len(key)

    def _find_whole(self, key: str, start: int, stop: int) -> int:
        """SillyTavern's "(?:^|non-word)key(?:$|non-word)": the end of the first occurrence
        within `start`..`stop` bounded by the text's ends or non-word characters, or -1."""
        text = self.text
        while self._work.spend(STEP_COST):
            end = self._find(key, start, stop)
            if end < 0:
                return -1
            begin = end - len(key)
            if (begin == 0 or not _is_word(text[begin - 1])) and \
                    (end == len(text) or not _is_word(text[end])):
                return end
            start = begin + 1
        return -1


def _is_word(char: str) -> bool:
    """A word character as a regular expression's word class sees it (letters, digits, `_`)."""
    return char.isalnum() or char == "_"
