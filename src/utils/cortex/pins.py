"""Pinned text: spans between `<!-- pin -->` and `<!-- /pin -->` that only the person changes.

A pinned block is the text from the opening marker through the closing one, markers included.
Markers pair in order; an opening marker with no closing one (or another opening marker before
its close) and a closing marker with no opening one are *broken*: the text they would enclose is
treated as unpinned and the person sees a warning in the editor. A run's edit may do anything
that keeps every pinned block byte for byte (also moving a block elsewhere in the file), but may
not change, drop, split or add pinned blocks: those are the person's.
"""
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

OPEN = "<!-- pin -->"
CLOSE = "<!-- /pin -->"
_MARKER = re.compile(r"<!--\s*(/?)\s*pin\s*-->", re.IGNORECASE)


@dataclass(frozen=True)
class PinnedSpan:
    """One pinned block: character offsets (end exclusive) and 1-based lines."""

    start: int
    end: int
    first_line: int
    last_line: int
    text: str

    def describe(self) -> str:
        """`lines 3–6 ("<!-- pin --> - Jonas is allergic…")` for error texts."""
        inner = " ".join(self.text.split())
        inner = inner if len(inner) <= 80 else inner[:77] + "..."
        lines = f"line {self.first_line}" if self.first_line == self.last_line else \
            f"lines {self.first_line}-{self.last_line}"
        return f'{lines} ("{inner}")'

    def to_dict(self) -> dict[str, Any]:
        """The REST shape."""
        return {"start": self.start, "end": self.end, "first_line": self.first_line,
                "last_line": self.last_line, "chars": len(self.text)}


def parse(text: str) -> tuple[list[PinnedSpan], list[dict[str, Any]]]:
    """The well-formed pinned blocks of `text`, and a warning per broken marker."""
    spans, warnings, opened = [], [], None
    for match in _MARKER.finditer(text):
        closing = bool(match.group(1))
        line = text.count("\n", 0, match.start()) + 1
        if match.group(0) != (CLOSE if closing else OPEN):
            warnings.append(_warning(line, f'"{match.group(0)}" is not written exactly as '
                                     f'"{CLOSE if closing else OPEN}"; it pins nothing.'))
            continue
        if not closing:
            if opened is not None:
                warnings.append(_warning(opened[1], "This pin is never closed before the next "
                                         f'"{OPEN}"; its text is not pinned.'))
            opened = (match.start(), line)
        elif opened is None:
            warnings.append(_warning(line, f'"{CLOSE}" without a "{OPEN}" before it; it pins '
                                           "nothing."))
        else:
            start, first = opened
            spans.append(PinnedSpan(start, match.end(), first, line, text[start:match.end()]))
            opened = None
    if opened is not None:
        warnings.append(_warning(opened[1], f'This pin is never closed (no "{CLOSE}" after '
                                            "it); its text is not pinned."))
    return spans, warnings


def violation(old: str, new: str) -> PinnedSpan | str | None:
    """None if `new` keeps every pinned block of `old` byte for byte and adds none; else the
    first block that was changed or dropped, or "added" for a new pinned block or a new marker
    (even a lone one: it would show the person a broken-pin warning they never caused, and wait
    for a later edit to close it)."""
    before, _ = parse(old)
    if not before and not _MARKER.search(new):
        return None
    after = Counter(span.text for span in parse(new)[0])
    wanted = Counter(span.text for span in before)
    for span in before:
        if after[span.text] < wanted[span.text]:
            return span
    if after != wanted or len(_MARKER.findall(new)) > len(_MARKER.findall(old)):
        return "added"
    return None


def mark_for_model(text: str) -> str:
    """An attribute listing the pinned lines for the preloaded file (`''` without pins)."""
    spans, _ = parse(text)
    if not spans:
        return ""
    ranges = ", ".join(f"{s.first_line}-{s.last_line}" for s in spans)
    return f' pinned_lines="{ranges}"'


def _warning(line: int, message: str) -> dict[str, Any]:
    return {"line": line, "message": message}
