"""Text that can always be stored and sent: the one rule for strings entering or leaving the app.

JSON may carry a lone surrogate ("\\ud800") that no UTF-8 encoder accepts: stored, it breaks
every later write, prompt and response that touches it. Input is refused (`first_unencodable`
names where); text read back from storage or from the model is repaired (`scrub` turns each
lone surrogate into U+FFFD), so nothing stored earlier can break a request. Imports nothing of
ours: every layer may use it.
"""
import json
from typing import Any, TypeAlias

REPLACEMENT = "\ufffd"


def is_encodable(text: str) -> bool:
    """Whether `text` has a UTF-8 form (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (a split pair is joined again)."""
    if text.isascii() or is_encodable(text):  # ASCII, the common case, needs no encoding
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def scrub_json(value: Any) -> Any:
    """A decoded JSON value with every string (keys too) scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(item) for item in value]
    if isinstance(value, dict):
        return {scrub(str(key)): scrub_json(item) for key, item in value.items()}
    return value


# A path as `first_unencodable` walks it: the root's name, or (parent path, key) pairs.
_Where: TypeAlias = "str | tuple[_Where, str | int]"


def first_unencodable(value: Any, path: str = "") -> str | None:
    """The path (`name`, `tags[0].x`) of a key or string without a UTF-8 form, or None.

    Well-formed input (nearly all of it) is settled by one encode in C; only a value that fails
    is walked to name the place."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        pass
    if isinstance(value, str):
        return None if is_encodable(value) else (path or "body")
    if not isinstance(value, (dict, list)):
        return None
    stack: list[tuple[dict | list, _Where]] = [(value, path)]  # (container, nested path)
    while stack:
        item, where = stack.pop()
        entries = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in entries:
            if isinstance(key, str) and not is_encodable(key):
                return _join(where, printable(key))
            if isinstance(child, str):
                if not is_encodable(child):
                    return _join(where, key)
            elif isinstance(child, (dict, list)):
                stack.append((child, (where, key)))
    return None


def _join(where: _Where, key: str | int) -> str:
    """A path kept as nested `(parent, key)` pairs (built only when needed) as `a.b[0].c`."""
    parts: list[str | int] = [key]
    while isinstance(where, tuple):
        where, parent_key = where
        parts.append(parent_key)
    text = where or ""
    for part in reversed(parts):
        text = f"{text}[{part}]" if isinstance(part, int) else (f"{text}.{part}" if text else part)
    return text


def printable(text: str) -> str:
    """`text` with lone surrogates written as `\\udXXX` escapes (for naming a hostile key)."""
    return "".join(c if is_encodable(c) else f"\\u{ord(c):04x}" for c in text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(raw: str | bytes) -> Any:
    """`raw` decoded as JSON as the standard defines it: Python's `NaN`, `Infinity` and
    `-Infinity` extensions are refused (ValueError), since a value stored from them makes every
    later answer that includes it invalid JSON."""
    return json.loads(raw, parse_constant=_no_constant)
