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
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

from .world_entries import AND_ALL, AND_ANY, NOT_ALL, NOT_ANY, Book, Entry
from .world_haystack import SCAN_WORK, STEP_COST, Haystack, Work

log = logging.getLogger(__name__)
MAX_RECURSION = 3
SCAN_CHARS = 1_000_000  # the newest conversation text a scan reads (about 250,000 tokens)


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
    scan = _Scan(messages, resolve)
    for step in range(MAX_RECURSION + 1):
        new, done = [], set()
        for entry in pending:
            if entry.book_id in closed:
                continue
            hit = scan.check(entry, by_id[entry.book_id], step)
            if hit is not None:
                done.add(id(entry))
                if _fits(hit, by_id, used, closed):
                    new.append(hit)
        fired += new
        pending = [entry for entry in pending if id(entry) not in done]
        scan.recurse([hit.content for hit in new if not hit.entry.prevent_recursion])
        if not new or not any(book.recursive for book in books):
            break
    if scan.work.spent:
        log.warning("World info scan stopped early: the books' keys and the conversation "
                    "need more than %d units of matching work", SCAN_WORK)
    return fired


class _Scan:
    """One turn's scan texts and the work it may spend: the conversation (the newest
    SCAN_CHARS characters) and the content of the entries activated so far, each folded
    once for the case-insensitive entries."""

    def __init__(self, messages: list[str], resolve: Callable[[str], str]):
        self.work = Work()
        self._messages = _newest(messages, SCAN_CHARS)
        self._recursed: list[str] = []
        self._resolve = resolve
        self._texts: dict[tuple[bool, bool], Haystack] = {}
        self._contents: dict[int, str] = {}

    def recurse(self, contents: list[str]) -> None:
        """Adds activated entries' content to what recursion passes scan."""
        if contents:
            self._recursed += contents
            self._texts = {key: text for key, text in self._texts.items() if not key[0]}

    def check(self, entry: Entry, book: Book, step: int) -> Fired | None:
        """`entry` activated in this pass (with its matched key), or None."""
        if step and entry.exclude_recursion:
            return None
        if not step and entry.delay_until_recursion:
            return None
        if not self.work.spend(STEP_COST):
            return None
        key = None
        if not entry.constant:
            depth = book.scan_depth if entry.scan_depth is None else entry.scan_depth
            key = next((k for k in entry.keys if self._hit(k, entry, depth, book.recursive)),
                       None)
            if key is None or not self._secondary(entry, depth, book.recursive):
                return None
        content = self._content(entry)
        if not content:
            return None
        return Fired(entry, key, content, estimate_tokens(content))

    def _content(self, entry: Entry) -> str:
        """The entry's text with placeholders filled, once per turn and only for an entry that
        activated (filling a thousand entries of 20,000 characters took 0.6 s), charged to the
        work limit like a search (an entry past the limit does not fire)."""
        if id(entry) not in self._contents:
            self._contents[id(entry)] = self._resolve(entry.content).strip() \
                if self.work.spend(len(entry.content)) else ""
        return self._contents[id(entry)]

    def _hit(self, key: str, entry: Entry, depth: int, recursive: bool) -> bool:
        """Whether `key` occurs in the entry's last `depth` messages or, for a recursive book,
        in the activated entries' content."""
        if not self.work.spend(STEP_COST):
            return False
        key = self._resolve(key).strip()
        if not key:
            return False
        if not entry.case_sensitive:
            key = key.lower()
        if self._text(False, entry.case_sensitive).where(key, entry.whole_words,
                                                         depth) is not None:
            return True
        return recursive and bool(self._recursed) and self._text(
            True, entry.case_sensitive).where(key, entry.whole_words) is not None

    def _text(self, recursion: bool, case_sensitive: bool) -> Haystack:
        if (recursion, case_sensitive) not in self._texts:
            parts = self._recursed if recursion else self._messages
            self.work.spend(sum(map(len, parts)))
            self._texts[recursion, case_sensitive] = Haystack(
                *(parts if case_sensitive else [part.lower() for part in parts]),
                work=self.work)
        return self._texts[recursion, case_sensitive]

    def _secondary(self, entry: Entry, depth: int, recursive: bool) -> bool:
        """SillyTavern's selective logic; no secondary keys (or not selective) always
        passes."""
        if not entry.selective or not entry.secondary_keys:
            return True
        hits = [self._hit(key, entry, depth, recursive) for key in entry.secondary_keys]
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
    return haystack.where(key if entry.case_sensitive else key.lower(),
                          entry.whole_words) is not None


def _newest(messages: list[str], limit: int) -> list[str]:
    """The newest messages that fit in `limit` characters (the newest one cut to fit)."""
    kept, left = [], limit
    for message in messages:
        if left <= 0:
            break
        kept.append(message[:left])
        left -= len(message) + 1
    return kept


def _fits(hit: Fired, books: dict[int, Book], used: dict[int, int], closed: set[int]) -> bool:
    """Whether a newly activated entry fits its book's budget (it then takes its share); a book
    whose next entry does not fit takes no more entries this turn (SillyTavern stops at the
    first overflow), so the entries after it are not even checked."""
    book_id = hit.entry.book_id
    if used[book_id] + hit.tokens > books[book_id].token_budget:
        closed.add(book_id)
        return False
    used[book_id] += hit.tokens
    return True


def prompt_order(fired: list[Fired]) -> list[Fired]:
    """Entries as they go into the prompt: `before_char` ones first, then `after_char`, each by
    ascending `insertion_order` (higher numbers nearer the conversation, as in SillyTavern)."""
    return sorted(fired, key=lambda hit: (hit.entry.position != "before_char", hit.entry.order))
