"""What learning from an imported history will cost, estimated before anything runs.

Tokens use the project's documented estimate (UTF-8 bytes / 3, rounded up: docs/models.md,
`api_request.context_window.estimate`). Each window is one update request: the fixed part (the
rules, the persona, the three files with their meters, the tool schemas) plus the window's
conversation, sent `ROUNDS` times (the round that edits and the round that reads the tool results
and ends; a cached prefix makes the later rounds cheaper, so this errs high). Output is
`OUTPUT_PER_WINDOW` tokens a window (an update writes a few lines and a summary), and at most the
update's `max_tokens` a round. Prices are Anthropic's list prices per million tokens (USD, no
cache discount), looked up by model family; an OpenAI-compatible endpoint, or a model the table
does not know, has an unknown cost (null) and says so.
"""
import math

ROUNDS = 2
OUTPUT_PER_WINDOW = 1_000
# (model id prefix or family word, input USD / million tokens, output USD / million tokens):
# the first entry whose text occurs in the model id wins, so specific ids come first.
PRICES: tuple[tuple[str, float, float], ...] = (
    ("claude-opus-4-0", 15.0, 75.0), ("claude-opus-4-1", 15.0, 75.0),
    ("claude-opus-4-2025", 15.0, 75.0), ("claude-3-opus", 15.0, 75.0),
    ("claude-3-haiku", 0.25, 1.25), ("claude-3-5-haiku", 0.8, 4.0),
    ("opus", 5.0, 25.0), ("sonnet", 3.0, 15.0), ("haiku", 1.0, 5.0),
)


def estimate_tokens(text: str) -> int:
    """The documented estimate: UTF-8 bytes / 3, rounded up."""
    return tokens_of_bytes(len(text.encode("utf-8", "replace")))


def tokens_of_bytes(size: int) -> int:
    """The same estimate for a text SQLite measured (`length(CAST(content AS BLOB))`)."""
    return math.ceil(size / 3)


def price_of(provider: str, model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when unknown."""
    if provider != "anthropic":
        return None
    name = (model or "").lower()
    for part, price_in, price_out in PRICES:
        if part in name:
            return price_in, price_out
    return None


def estimate(windows: list[int], fixed: int, provider: str, model: str,
             max_tokens: int) -> dict:
    """The estimate for windows whose conversations take `windows` tokens each, on top of a
    request of `fixed` tokens: `{windows, input_tokens, output_tokens, output_tokens_max,
    cost: {usd, currency, known, model, provider, input_per_million, output_per_million}}`."""
    input_tokens = sum((fixed + own) * ROUNDS for own in windows)
    output_tokens = OUTPUT_PER_WINDOW * len(windows)
    price = price_of(provider, model)
    usd = None if price is None else round(
        (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 4)
    return {"windows": len(windows), "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "output_tokens_max": max_tokens * ROUNDS * len(windows),
            "cost": {"usd": usd, "currency": "USD", "known": price is not None, "model": model,
                     "provider": provider,
                     "input_per_million": price[0] if price else None,
                     "output_per_million": price[1] if price else None}}
