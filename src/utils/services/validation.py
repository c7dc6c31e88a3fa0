"""Strict checks for JSON input: each failure names the field and the rule it broke (a 400)."""
import re
from collections.abc import Sequence
from typing import TypeVar

from ..text import first_unencodable, is_encodable
from .errors import invalid

UNENCODABLE = "must be valid Unicode text (it contains a lone surrogate such as \\ud800)"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAK = re.compile(r"[\r\n\u2028\u2029]")
T = TypeVar("T")


def encodable_json(data: T) -> T:
    """`data` (decoded JSON) if every key and string in it is encodable text; else a 400 naming
    the first field that is not (JSON's `\\ud800` escape decodes to text no encoder takes)."""
    bad = first_unencodable(data)
    if bad is not None:
        raise invalid(bad, UNENCODABLE)
    return data


def encodable(field: str, value: str) -> str:
    """`value` if it has a UTF-8 form, else a 400 naming `field`."""
    if not is_encodable(value):
        raise invalid(field, UNENCODABLE)
    return value


def text(field: str, value: object, *, max_len: int, min_len: int = 0, single_line: bool = False) -> str:
    """A string of `min_len`..`max_len` characters (single-line ones are stripped)."""
    if not isinstance(value, str):
        raise invalid(field, "must be a string")
    encodable(field, value)
    if single_line:
        value = value.strip()
        if _LINE_BREAK.search(value):
            raise invalid(field, "must be a single line")
    if _CONTROL.search(value):
        raise invalid(field, "must not contain control characters")
    if not min_len <= len(value) <= max_len:
        rule = (f"must not be longer than {max_len} characters" if min_len == 0
                else f"must be {min_len} to {max_len} characters long")
        raise invalid(field, rule)
    return value


def choice(field: str, value: object, options: Sequence[T]) -> T:
    """One of `options` (which may include None)."""
    for option in options:
        if value == option:
            return option
    shown = ", ".join("null" if o is None else f'"{o}"' for o in options)
    raise invalid(field, f"must be one of {shown}")


def integer(field: str, value: object, *, low: int, high: int) -> int:
    """A whole number from `low` to `high` (JSON booleans and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(field, f"must be an integer from {low} to {high}")
    return value
