"""The scan as a pure function (src/utils/services/world_scan.py): key matching at the edges
SillyTavern's `matchKeys` defines, and budgets kept per book."""
import pytest

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
        rows = [{"id": order, "data": {"keys": ["k"], "content": "a" * 30,
                                       "insertion_order": order}} for order in orders]
        return read_book(book_id, {"token_budget": budget}, rows)
    fired = activate([book(1, 10, [1, 2]), book(2, 25, [3, 4, 5])], ["user: k"])
    assert [(hit.entry.book_id, hit.entry.order) for hit in fired] == [(2, 5), (2, 4), (1, 2)]
    assert estimate_tokens("a" * 30) == 10 and estimate_tokens("ä") == 1
