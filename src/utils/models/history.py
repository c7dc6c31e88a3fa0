"""The prompt's history: what a chat turn reads of its branch's rows, typed but light.

A chat turn reads up to `context_limit` rows (40 by default, at most 400) on every turn, so a
history row is a `NamedTuple` made from SQLite's plain tuple (`_make`), not a validated model:
the table's CHECKs already hold what a model would check, and a pydantic validate per row costs
microseconds the turn would pay for nothing (docs/development.md, "Typed resources"). The
REST answers read the same rows as `sessions.Message`.
"""
from typing import Literal, NamedTuple


class HistoryMessage(NamedTuple):
    """One turn of a prompt's history (Messages-API order: see `history_for_prompt`)."""

    id: int  # the (first) message of the turn
    role: Literal["user", "assistant"]  # the table's CHECK, not checked again
    content: str

    def turn(self) -> dict[str, str]:
        """The turn as the request's `messages` carry it (`{role, content}`)."""
        return {"role": self.role, "content": self.content}
