"""Fitting a request into its context window (docs/models.md): UTF-8 bytes / 3 rounded up plus 4
per message, the oldest history dropped first, never the system prompt, and a history that starts
with the person's turn. A history that fits even at 4 bytes a character is not counted at all;
the result is the same as counting it, right at the window's edge too."""
import math

from hypothesis import example, given, settings, strategies as st

from src.utils.api_request.context_window import fit
from src.utils.api_request.errors import ApiFailure
from src.utils.api_request.openai import system_text
from src.utils.api_request.types import RequestConfig, SystemBlock

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
WIDE = st.text(st.characters(min_codepoint=0x10000, exclude_categories=("Cs",)), max_size=30)


def _tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 3)


def _reference(config: RequestConfig, window: int):
    """The rule as documented, counted message by message."""
    fixed = _tokens(config.system_prompt) + 4 + config.max_tokens
    costs = [_tokens(m["content"]) + 4 for m in config.messages]
    if fixed + (costs[-1] if costs else 0) > window:
        return "context_too_small"
    total, start = fixed + sum(costs), 0
    while total > window and start < len(costs) - 1:
        total -= costs[start]
        start += 1
    while start < len(costs) - 1 and config.messages[start]["role"] != "user":
        start += 1
    return config.messages[start:]


def _fits_as_counted(config: RequestConfig, counted: RequestConfig, slack: int) -> None:
    """`fit(config)` gives what the counted rule gives for `counted` (the same request, its
    system prompt as one text), below, at and above the exact window and far above it."""
    exact = (_tokens(counted.system_prompt) + 4 + counted.max_tokens
             + sum(_tokens(m["content"]) + 4 for m in counted.messages))
    for window in (exact - slack, exact, exact + slack, 4 * exact + 20):
        result = fit(config, max(window, 1))
        expected = _reference(counted, max(window, 1))
        if isinstance(result, ApiFailure):
            assert result.code == expected
        else:
            assert result.messages == expected


@settings(max_examples=300, deadline=None)
@given(TEXT, st.lists(st.tuples(st.sampled_from(["user", "assistant"]), TEXT), max_size=8),
       st.integers(0, 40), st.integers(1, 50))
def test_fit_keeps_exactly_what_the_counted_rule_keeps(system, turns, slack, max_tokens):
    messages = [{"role": role, "content": text} for role, text in turns]
    config = RequestConfig(system_prompt=system, messages=messages, max_tokens=max_tokens)
    _fits_as_counted(config, config, slack)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TEXT, WIDE), min_size=1, max_size=4),  # WIDE: 4 bytes a character
       st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.one_of(TEXT, WIDE)),
                max_size=6),
       st.integers(0, 40), st.integers(1, 50))
@example(["\U00010000", "\U00010000"], [], 1, 1)  # the blank line joining them decides the fit
def test_a_system_prompt_in_blocks_counts_as_the_text_it_is_sent_as(blocks, turns, slack,
                                                                      max_tokens):
    """Blocks are joined by a blank line when sent (`openai.system_text`); the bound that
    spares counting a history that fits must hold for them too, so the result is the same as
    for that one text."""
    messages = [{"role": role, "content": text} for role, text in turns]
    system = [SystemBlock(text) for text in blocks]
    joined = RequestConfig(system_prompt=system_text(system), messages=messages,
                           max_tokens=max_tokens)
    config = RequestConfig(system_prompt=system, messages=messages, max_tokens=max_tokens)
    _fits_as_counted(config, joined, slack)
