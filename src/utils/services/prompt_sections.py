"""A recorded request body cut into the sections a person reads (docs/prompt-inspector.md).

The body is the exact bytes the SDK sent. Each section is a run of text inside one of its
strings (or, for the history, a run of messages): the persona, each cortex file, the "About you"
description, the world info, the time, the history, the person's message, the card's
post-history instructions and a continued reply. `start`/`end` are the byte offsets of that
content in the body. The sections also tile the body: sorted by `start`, section *i* owns the
bytes from its `start` (the first section: from byte 0) up to the next section's `start` (the
last one: to the end), so its `raw` holds its content plus the JSON around it up to the next
section, and the `raw`s joined in body order are the body, byte for byte.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .json_spans import Path, char_to_byte, string_spans

CORTEX_TAGS = (("memory.md", "cortex_memory"), ("soul.md", "cortex_soul"),
               ("relationship.md", "cortex_relationship"))
_BLOCK_KINDS = {"persona", "about", "world", "time"}


@dataclass
class Section:
    """One part of the request: what it is, its text, where it is, and whether it is cached."""

    kind: str
    label: str
    text: str
    start: int
    end: int
    cached: bool
    messages: list[dict] | None = None
    offset: int = 0
    raw: str = ""


@dataclass
class _Piece:
    """A string of the body: its path and its token's byte span."""

    path: Path
    start: int
    end: int
    token: bytes

    def span(self, first: int = 0, last: int | None = None) -> tuple[int, int]:
        """The byte span of decoded characters first..last (default: all) of the string."""
        text_end = self.end - self.start - 1
        to = text_end if last is None else char_to_byte(self.token, last)
        return self.start + char_to_byte(self.token, first), self.start + to


# Finds the piece of the body at a JSON path.
_PieceAt = Callable[[Path], _Piece]


def split(body: bytes, layout: list[dict], provider: str) -> list[Section]:
    """The sections of `body` in prompt order, tiled as the module docstring says.

    `layout` names the system blocks (`[{label, cache, chars}]`, recorded when sent)."""
    parsed = json.loads(body)
    spans = string_spans(body)

    def piece(path: Path) -> _Piece:
        start, end = spans[path]
        return _Piece(path, start, end, body[start:end])
    if provider == "openai_compatible":
        sections = _openai(parsed, piece, layout)
    else:
        sections = _anthropic(parsed, piece, layout)
    return _tile(sections, body)


def _anthropic(parsed: dict, piece: _PieceAt, layout: list[dict]) -> list[Section]:
    system = parsed.get("system")
    out: list[Section] = []
    if isinstance(system, str):
        out.append(_whole("system", piece(("system",)), False))
    elif isinstance(system, list):
        last_cached = max((i for i, block in enumerate(system) if block.get("cache_control")),
                          default=-1)
        labels = _labels(layout, len(system))
        for index, label in enumerate(labels):
            text_piece = piece(("system", index, "text"))
            out += _block(label, text_piece, index <= last_cached, 0, None)
    return out + _messages(parsed.get("messages") or [], piece, 0)


def _openai(parsed: dict, piece: _PieceAt, layout: list[dict]) -> list[Section]:
    messages = parsed.get("messages") or []
    if not messages or messages[0].get("role") != "system":
        return _messages(messages, piece, 0)
    whole = piece(("messages", 0, "content"))
    text = json.loads(whole.token)
    out: list[Section] = []
    cursor = 0
    for entry in layout:
        chars = int(entry.get("chars") or 0)
        if not chars:
            continue
        out += _block(str(entry.get("label") or "system"), whole, False, cursor, cursor + chars)
        cursor += chars + 2  # blocks are joined by a blank line
    if not out or cursor - 2 != len(text):  # a layout that does not fit: one system section
        out = [_whole("system", whole, False)]
    return out + _messages(messages, piece, 1)


def _labels(layout: list[dict], count: int) -> list[str]:
    labels = [str(entry.get("label") or "") for entry in layout if entry.get("chars")]
    if len(labels) != count or not set(labels) <= _BLOCK_KINDS:
        return ["system"] * count
    return labels


def _block(label: str, whole: _Piece, cached: bool, first: int, last: int | None) -> list[Section]:
    """A system block (characters first..last of its string); the persona block is cut where
    each cortex file's tagged section begins."""
    text = json.loads(whole.token)
    stop = len(text) if last is None else last
    if label != "persona":
        return [_part(label, label, whole, text, first, stop, cached)]
    cuts = _cortex_cuts(text[first:stop])
    if not cuts:
        return [_part("persona", "persona", whole, text, first, stop, cached)]
    bounds = [first, *(first + at for at, _ in cuts), stop]
    names = ["persona", *(name for name, _ in CORTEX_TAGS)]
    return [_part("persona" if number == 0 else "cortex", name, whole, text, bounds[number],
                  bounds[number + 1], cached) for number, name in enumerate(names)]


def _cortex_cuts(text: str) -> list[tuple[int, int]]:
    """`(opening tag, end of closing tag)` of each cortex file's section (character offsets),
    in order; none when the block holds no cortex.

    File contents are fenced, so the last `</cortex_…>` of each name is the prompt's own closing
    tag. The first file's opening tag is the last one on a line of its own before its closing
    tag; each later file's is the first after the previous file's closing tag (the prompt puts
    only a blank line between them). Text that imitates the tags can at worst move a boundary
    between two sections; the sections still add up to the body."""
    cuts: list[tuple[int, int]] = []
    for _name, tag in CORTEX_TAGS:
        close = text.rfind(f"</{tag}>")
        if close < 0:
            return []
        if cuts:
            opening = text.find(f"<{tag}>\n", cuts[-1][1], close)
        else:
            opening = text.rfind(f"\n<{tag}>\n", 0, close)
            opening = opening + 1 if opening >= 0 else -1
        if opening < 0:
            return []
        cuts.append((opening, close + len(tag) + 3))
    return cuts


def _part(kind: str, label: str, whole: _Piece, text: str, first: int, last: int,
          cached: bool) -> Section:
    start, end = whole.span(first, last)
    return Section(kind, label, text[first:last], start, end, cached)


def _whole(kind: str, whole: _Piece, cached: bool) -> Section:
    text = json.loads(whole.token)
    return _part(kind, kind, whole, text, 0, len(text), cached)


def _messages(messages: list[dict], piece: _PieceAt, skip: int) -> list[Section]:
    """History, the person's message (the last user turn), its post-history instructions and a
    continued reply after it."""
    turns = list(enumerate(messages))[skip:]
    users = [index for index, message in turns if message.get("role") == "user"]
    if not users:
        return []
    last = users[-1]
    texts = {index: _texts(message, index, piece) for index, message in turns}
    out: list[Section] = []
    history = [(index, texts[index]) for index, _ in turns if index < last and texts[index]]
    if history:
        first, final = history[0][1][0], history[-1][1][-1]
        shown = [{"role": str(messages[index].get("role")),
                  "text": "\n\n".join(t for _, t in parts)} for index, parts in history]
        out.append(Section("history", "history", "\n\n".join(m["text"] for m in shown),
                           first[0].span()[0], final[0].span()[1], False, messages=shown))
    for number, (part, text) in enumerate(texts[last]):
        kind = "message" if number == 0 else "instructions"
        start, end = part.span()
        out.append(Section(kind, kind, text, start, end, False))
    for index, _ in turns:
        for part, text in texts[index] if index > last else ():
            start, end = part.span()
            out.append(Section("continuation", "continuation", text, start, end, False))
    return out


def _texts(message: dict, index: int, piece: _PieceAt) -> list[tuple[_Piece, str]]:
    content = message.get("content")
    if isinstance(content, str):
        return [(piece(("messages", index, "content")), content)]
    out = []
    for number, block in enumerate(content or ()):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            out.append((piece(("messages", index, "content", number, "text")), block["text"]))
    return out


def _tile(sections: list[Section], body: bytes) -> list[Section]:
    ordered = sorted(sections, key=lambda section: (section.start, section.end))
    for number, section in enumerate(ordered):
        section.offset = 0 if number == 0 else section.start
        stop = ordered[number + 1].start if number + 1 < len(ordered) else len(body)
        section.raw = body[section.offset:stop].decode("utf-8")
    return sections
