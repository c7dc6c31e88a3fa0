"""Where each string of a JSON document sits in its bytes, for the prompt inspector.

`json.loads` gives values but not positions; the inspector must say which bytes of the body a
section is, so this walks the UTF-8 bytes once and records every string value's token (quotes
included) by its path; each string token is matched by a compiled expression (C speed).
Multi-byte UTF-8 never contains a byte below 0x80, so matching bytes for `"` and `\\` is safe.
The document is one the SDK just produced (`json.loads` accepted it before this runs), so the
walker does not repeat JSON's validation. Cost, measured on a 2-core VM: about 25 ms per MB of
body for the spans, 60 ms per MB for the sections; a chat request is bounded by the context
window (200,000 tokens is about 600 KB by the app's estimate).
"""
from __future__ import annotations

import json
import re

Path = tuple[str | int, ...]
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_SPACE = b" \t\r\n"


def string_spans(raw: bytes) -> dict[Path, tuple[int, int]]:
    """Every string value's `(start, end)` byte span in `raw` (quotes included), by path."""
    spans: dict[Path, tuple[int, int]] = {}
    _value(raw, _skip(raw, 0), (), spans)
    return spans


def char_to_byte(token: bytes, index: int) -> int:
    """The byte offset inside string `token` (quotes included) where decoded character `index`
    begins; `index` = the decoded length gives the offset of the closing quote.

    Both SDKs encode with `json.dumps(ensure_ascii=False)` rules, so for such a token the offset
    is the length of the prefix encoded the same way (C speed). Any other token is walked run by
    run between its escapes."""
    text = decode(token)
    if _encoded(text) == token:
        return len(_encoded(text[:index])) - 1
    at, seen = 1, 0
    while True:
        slash = token.find(b"\\", at)
        stop = len(token) - 1 if slash < 0 else slash
        run = token[at:stop].decode("utf-8")
        if seen + len(run) >= index or slash < 0:
            return at + len(run[:index - seen].encode("utf-8"))
        seen += len(run) + 1  # the escape is one character (a surrogate pair too)
        at = slash + _escape_length(token, slash)


def _encoded(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False).encode("utf-8")


def _escape_length(token: bytes, at: int) -> int:
    if token[at + 1] != 0x75:  # \n, \", \\ …
        return 2
    code = int(token[at + 2:at + 6], 16)
    return 12 if 0xD800 <= code < 0xDC00 else 6


def decode(token: bytes) -> str:
    """The text of a string token."""
    return json.loads(token)


def _skip(raw: bytes, at: int) -> int:
    while at < len(raw) and raw[at] in _SPACE:
        at += 1
    return at


def _string_end(raw: bytes, at: int) -> int:
    """The offset after the string token starting at `at` (matched in C by `_STRING`)."""
    found = _STRING.match(raw, at)
    if found is None:
        raise ValueError(f"no JSON string at byte {at}")
    return found.end()


def _value(raw: bytes, at: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    """Walks the value starting at `at`; returns the offset after it."""
    lead = raw[at]
    if lead == 0x22:
        end = _string_end(raw, at)
        spans[path] = (at, end)
        return end
    if lead == 0x7B:
        return _members(raw, at, path, spans)
    if lead == 0x5B:
        return _items(raw, at, path, spans)
    while at < len(raw) and raw[at] not in b",]}" and raw[at] not in _SPACE:
        at += 1  # a number, true, false or null
    return at


def _members(raw: bytes, at: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    at = _skip(raw, at + 1)
    while raw[at] != 0x7D:
        key_end = _string_end(raw, at)
        key = decode(raw[at:key_end])
        at = _skip(raw, _skip(raw, key_end) + 1)  # past the colon
        at = _skip(raw, _value(raw, at, (*path, key), spans))
        if raw[at] == 0x2C:
            at = _skip(raw, at + 1)
    return at + 1


def _items(raw: bytes, at: int, path: Path, spans: dict[Path, tuple[int, int]]) -> int:
    at, index = _skip(raw, at + 1), 0
    while raw[at] != 0x5D:
        at = _skip(raw, _value(raw, at, (*path, index), spans))
        index += 1
        if raw[at] == 0x2C:
            at = _skip(raw, at + 1)
    return at + 1
