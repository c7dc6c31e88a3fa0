"""Text that can always be stored and sent: the one rule for strings entering or leaving the app.

JSON may carry a lone surrogate ("\\ud800") that no UTF-8 encoder accepts: stored, it breaks
every later write, prompt and response that touches it. Input is refused (`first_unencodable`
names where); text read back from storage or from the model is repaired (`scrub` turns each
lone surrogate into U+FFFD), so nothing stored earlier can break a request. Imports nothing of
ours: every layer may use it.
"""
from typing import Any

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
    if is_encodable(text):
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


def first_unencodable(value: Any, path: str = "") -> str | None:
    """The path (`name`, `tags[0].x`) of the first key or string without a UTF-8 form, or None."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if not is_encodable(item):
                return where or "body"
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            names = [(f"{where}.{key}" if where else key, key) for key in item]
            bad = next((name for name, key in names if not is_encodable(key)), None)
            if bad is not None:
                return printable(bad)
            stack.extend((name, item[key]) for name, key in reversed(names))
    return None


def printable(text: str) -> str:
    """`text` with lone surrogates written as `\\udXXX` escapes (for naming a hostile key)."""
    return "".join(c if is_encodable(c) else f"\\u{ord(c):04x}" for c in text)
