"""Which lorebook entries a turn activates: SillyTavern's `checkWorldInfo`, reduced to the
`character_book` fields (docs/world-info.md has the decisions and where they come from).

The scan reads the conversation newest first. Each pass looks at every enabled entry not yet
active, highest `insertion_order` first: `constant` entries always activate; others need a
primary key in their scan text (the last `scan_depth` messages, plus, in recursion passes and for
recursive books, the content of entries activated earlier), then their secondary keys by the
selective logic. New entries then take their book's token budget in that order; the first one
that does not fit closes the book. Recursion repeats the pass with the new content, at most
MAX_RECURSION times, and stops when a pass activates nothing new.
"""
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from .world_entries import AND_ALL, AND_ANY, NOT_ALL, NOT_ANY, Book, Entry

MAX_RECURSION = 3
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def estimate_tokens(text: str) -> int:
    """The documented, deterministic estimate: UTF-8 bytes / 3, rounded up (the same rule the
    context window uses, docs/models.md); it never undercounts Claude's tokenizer by much."""
    return math.ceil(len(text.encode("utf-8")) / 3)


@dataclass(frozen=True)
class Fired:
    """An activated entry with what activated it and its text as it goes into the prompt."""

    entry: Entry
    key: str | None
    content: str
    tokens: int

    def record(self) -> dict:
        """The JSON stored with the reply (messages.world_info) and shown in the API."""
        return {"book_id": self.entry.book_id, "entry_id": self.entry.id,
                "name": self.entry.name, "key": self.key, "constant": self.entry.constant,
                "position": self.entry.position, "order": self.entry.order,
                "tokens": self.tokens, "content": self.content}


def activate(books: list[Book], messages: list[str],
             resolve: Callable[[str], str] = lambda text: text) -> list[Fired]:
    """The entries activated by `messages` (newest first), in activation order.

    `resolve` fills card placeholders (`{{char}}`, `{{user}}`) in keys and content first."""
    by_id = {book.id: book for book in books}
    pending = sorted((entry for book in books for entry in book.entries if entry.enabled),
                     key=lambda entry: -entry.order)
    used = {book.id: 0 for book in books}
    closed: set[int] = set()
    fired: list[Fired] = []
    recursed: list[str] = []
    for step in range(MAX_RECURSION + 1):
        texts = _Texts(messages, recursed)
        found = [hit for hit in (_check(entry, by_id[entry.book_id], texts, step, resolve)
                                 for entry in pending if entry.book_id not in closed) if hit]
        new = _within_budget(found, by_id, used, closed)
        fired += new
        done = {id(hit.entry) for hit in found}
        pending = [entry for entry in pending if id(entry) not in done]
        recursed += [hit.content for hit in new if not hit.entry.prevent_recursion]
        if not new or not any(book.recursive for book in books):
            break
    return fired


class Haystack:
    """A scan text (case-folded unless case-sensitive) and, built on first use, its set of
    words, so a one-word key is a set lookup rather than a search through the text."""

    def __init__(self, text: str):
        self.text = text
        self._words: set[str] | None = None

    @property
    def words(self) -> set[str]:
        """Every maximal run of word characters in the text."""
        if self._words is None:
            self._words = set(_WORD.findall(self.text))
        return self._words


class _Texts:
    """The scan texts of one pass, each built once however many entries and keys read it: a
    book of a thousand entries costs a thousand lookups, not a thousand joins."""

    def __init__(self, messages: list[str], recursed: list[str]):
        self._messages, self._recursed = messages, recursed
        self._cache: dict[tuple[int, bool, bool], Haystack] = {}

    def get(self, depth: int, recursive: bool, case_sensitive: bool) -> Haystack:
        """The last `depth` messages (plus the recursion text), folded unless case-sensitive."""
        key = (depth, recursive, case_sensitive)
        if key not in self._cache:
            parts = self._messages[:depth] + (self._recursed if recursive else [])
            text = "\n".join(parts)
            self._cache[key] = Haystack(text if case_sensitive else text.lower())
        return self._cache[key]


def _check(entry: Entry, book: Book, texts: _Texts, step: int,
           resolve: Callable[[str], str]) -> Fired | None:
    """`entry` activated in this pass (with its matched key), or None."""
    if step and entry.exclude_recursion:
        return None
    if not step and entry.delay_until_recursion:
        return None
    content = resolve(entry.content).strip()
    if not content:
        return None
    if entry.constant:
        return Fired(entry, None, content, estimate_tokens(content))
    depth = book.scan_depth if entry.scan_depth is None else entry.scan_depth
    haystack = texts.get(depth, book.recursive, entry.case_sensitive)
    if not haystack.text or not entry.keys:
        return None
    key = next((k for k in entry.keys if matches(haystack, resolve(k), entry)), None)
    if key is None or not _secondary(entry, haystack, resolve):
        return None
    return Fired(entry, key, content, estimate_tokens(content))


def _secondary(entry: Entry, haystack: Haystack, resolve: Callable[[str], str]) -> bool:
    """SillyTavern's selective logic; no secondary keys (or not selective) always passes."""
    if not entry.selective or not entry.secondary_keys:
        return True
    hits = [matches(haystack, resolve(key), entry) for key in entry.secondary_keys]
    if entry.logic == AND_ANY:
        return any(hits)
    if entry.logic == NOT_ALL:
        return not all(hits)
    if entry.logic == NOT_ANY:
        return not any(hits)
    if entry.logic == AND_ALL:
        return all(hits)
    return False


def matches(haystack: Haystack, key: str, entry: Entry) -> bool:
    """SillyTavern's `matchKeys` for plain keys on a haystack already folded unless the entry is
    case-sensitive: whole words are bounded by the text's ends or a non-word character (its
    "(?:^|non-word)key(?:$|non-word)" pattern), and a key of several words is a plain
    substring."""
    key = key.strip()
    if not key:
        return False
    if not entry.case_sensitive:
        key = key.lower()
    if not entry.whole_words or _SPACE.search(key):
        return key in haystack.text
    if _WORD.fullmatch(key):
        return key in haystack.words
    text, start = haystack.text, haystack.text.find(key)
    while start != -1:
        end = start + len(key)
        if (start == 0 or not _is_word(text[start - 1])) and \
                (end == len(text) or not _is_word(text[end])):
            return True
        start = text.find(key, start + 1)
    return False


def _is_word(char: str) -> bool:
    """A word character as a regular expression's word class sees it (letters, digits, `_`)."""
    return char.isalnum() or char == "_"


def _within_budget(found: list[Fired], books: dict[int, Book], used: dict[int, int],
                   closed: set[int]) -> list[Fired]:
    """The new entries that fit their book's budget, in order; a book whose next entry does not
    fit takes no more entries this turn (SillyTavern stops at the first overflow)."""
    kept = []
    for hit in found:
        book_id = hit.entry.book_id
        if book_id in closed:
            continue
        if used[book_id] + hit.tokens > books[book_id].token_budget:
            closed.add(book_id)
            continue
        used[book_id] += hit.tokens
        kept.append(hit)
    return kept


def prompt_order(fired: list[Fired]) -> list[Fired]:
    """Entries as they go into the prompt: `before_char` ones first, then `after_char`, each by
    ascending `insertion_order` (higher numbers nearer the conversation, as in SillyTavern)."""
    return sorted(fired, key=lambda hit: (hit.entry.position != "before_char", hit.entry.order))
