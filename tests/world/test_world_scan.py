"""The scan as a pure function (src/utils/services/world_scan.py): key matching at the edges
SillyTavern's `matchKeys` defines, and budgets kept per book."""
import random
import re

import pytest

from src.utils.models.world import StoredEntry
from src.utils.services.world_entries import read_book, read_entry
from src.utils.services.world_scan import Haystack, activate, estimate_tokens, matches


@pytest.mark.parametrize(("key", "text", "hit"), [
    ("dr.", "ask dr. who", True),        # a key ending in punctuation
    ("dr.", "ask dr.who", False),     # as in SillyTavern: the next character must be a non-word
    ("magic-forest", "the magic-forest!", True),
    ("magic-forest", "themagic-forest", False),
    ("ring", "ring", True),               # the text's own ends bound a word
    ("ring", "rings", False),
    ("ring", "the_ring", False),          # `_` is a word character
    ("über", "grün über allem", True),
    ("über", "drüber", False),
    ("old  town", "old town", False),     # several words: a plain substring
])
def test_whole_word_matching(key, text, hit):
    entry = read_entry(1, 1, {"keys": [key], "content": "x"})
    assert matches(Haystack(text.lower()), key, entry) is hit


def test_each_book_has_its_own_budget():
    def book(book_id, budget, orders):
        rows = [StoredEntry(order, book_id, {"keys": ["k"], "content": "a" * 30,
                                             "insertion_order": order}) for order in orders]
        return read_book(book_id, {"token_budget": budget}, rows)
    fired = activate([book(1, 10, [1, 2]), book(2, 25, [3, 4, 5])], ["user: k"])
    assert [(hit.entry.book_id, hit.entry.order) for hit in fired] == [(2, 5), (2, 4), (1, 2)]
    assert estimate_tokens("a" * 30) == 10 and estimate_tokens("ä") == 1


def _naive_hit(messages: list[str], key: str, depth: int, case_sensitive: bool,
               whole: bool) -> bool:
    """The definition the scan must keep: the key in the last `depth` messages joined by line
    breaks, as SillyTavern's "(?:^|non-word)key(?:$|non-word)" when whole words apply (no space
    in the key), else as a substring."""
    text, key = "\n".join(messages[:depth]), key.strip()
    if not case_sensitive:
        text, key = text.lower(), key.lower()
    if not key:
        return False
    if whole and not re.search(r"\s", key):
        return re.search(r"(?<!\w)" + re.escape(key) + r"(?!\w)", text) is not None
    return key in text


def test_the_bounded_scan_fires_what_the_plain_definition_says():
    """The scan searches each key once per turn, as deep as the deepest entry asks, and indexes
    words (world_haystack.py); random books over random chats (punctuation, Unicode, spaces,
    per-entry depths, case) fire exactly the entries the plain definition names."""
    rng = random.Random(7)
    alphabet = ["a", "b", "ß", "Straße", " ", ".", "-", "_", "A", "é", "\n", "!", "ab", "b.a"]

    def text(n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))
    for _ in range(200):
        messages = [text(rng.randint(0, 30)) for _ in range(rng.randint(0, 6))]
        rows = []
        for number in range(12):
            whole, case = rng.random() < 0.7, rng.random() < 0.3
            rows.append(StoredEntry(number, 1, {
                "keys": [text(rng.randint(1, 4)).replace("\n", "") for _ in range(2)],
                "content": f"entry {number}", "case_sensitive": case,
                "extensions": {"match_whole_words": whole,
                               "scan_depth": rng.choice([None, 0, 1, 2, 5, 1000])}}))
        book = read_book(1, {"scan_depth": rng.choice([0, 1, 3, 1000]),
                             "token_budget": 100_000}, rows)
        fired = {hit.entry.id for hit in activate([book], messages)}
        expected = {entry.id for entry in book.entries if any(
            _naive_hit(messages, key, book.scan_depth if entry.scan_depth is None
                       else entry.scan_depth, entry.case_sensitive, entry.whole_words)
            for key in entry.keys)}
        assert fired == expected, (messages, [e.keys for e in book.entries])


def test_a_scan_over_its_work_limit_stops_at_the_same_place_every_time():
    """Entries are checked highest `insertion_order` first; once the turn's work is spent the
    rest match nothing, so the prompt is the same for the same books and messages."""
    rows = [StoredEntry(order, 1, {"keys": [f"{order}-x", "x"], "content": f"c{order}",
                                   "insertion_order": order}) for order in range(1000)]
    book = read_book(1, {"scan_depth": 1000, "token_budget": 200_000}, rows)
    messages = ["a-x b." * 20_000] * 20
    first = [hit.entry.id for hit in activate([book], messages)]
    assert first == [hit.entry.id for hit in activate([book], messages)]
    assert 0 < len(first) < 1000 and first == sorted(first, reverse=True)
    assert first[0] == 999 and first == list(range(999, 999 - len(first), -1))


def test_only_entries_that_activate_and_fit_are_filled_in():
    """Filling placeholders in a thousand entries of 20,000 characters took 0.6 s of the loop per
    turn when every entry was filled before its keys were checked; now only an entry whose key
    matched is, and none after the first that overflows its book's budget."""
    filled = []

    def resolve(text: str) -> str:
        filled.append(text)
        return text
    rows = [StoredEntry(i, 1, {"keys": [f"k{i}"], "content": f"content {i}",
                               "insertion_order": i}) for i in range(100)]
    book = read_book(1, {"token_budget": 10}, rows)  # "content 99": 4 tokens; two fit
    fired = activate([book], ["user: k99 k98 k97 k96 k5"], resolve)
    assert [hit.entry.id for hit in fired] == [99, 98]
    assert [text for text in filled if text.startswith("content")] == [
        "content 99", "content 98", "content 97"]
