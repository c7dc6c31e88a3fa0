"""The tools a cortex update may call, and their executor for one update job.

The tools edit a staged copy of the files (`StagedEdits`); nothing reaches the files until the
run succeeds and `CortexService.apply_staged` applies the whole group. Before each call the
staged copy is brought up to date with the files: a person's edit made meanwhile is kept and the
run's `str_replace` and `insert` edits are replayed on top of it; a whole-file `write_file` is
refused until the model has read the person's version. Every error text says what happened and
what the model can do next; nothing is staged on an error.
"""
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..api_request.types import ToolDefinition
from .paths import CORTEX_FILES
from .personas_lookup import persona_exists
from .service import CortexService
from .staging import EditError, StagedEdits, StagingConflict, split_lines

log = logging.getLogger(__name__)
TOOL_NAMES = ("read_file", "write_file", "str_replace", "insert")
_FILENAME = {"type": "string", "enum": list(CORTEX_FILES),
             "description": "memory.md (memories), soul.md (your development) or "
                            "relationship.md (the relationship)"}


def tool_definitions() -> list[ToolDefinition]:
    """The four cortex tools with their JSON schemas."""
    def schema(**properties: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"filename": _FILENAME, **properties},
                "required": ["filename", *properties], "additionalProperties": False}

    text = {"type": "string"}
    return [
        ToolDefinition("read_file", "Reads the current text of one of your cortex files. The "
                       "files are already in the prompt; read one again only when an error "
                       "says it changed.", schema()),
        ToolDefinition("write_file", "Replaces a whole cortex file with `content`, which must be "
                       "the COMPLETE new file. Use it to restructure or consolidate a file; for "
                       "small changes use str_replace or insert.",
                       schema(content={**text, "description": "the complete new file"})),
        ToolDefinition("str_replace", "Replaces the one exact occurrence of `old_str` in a file "
                       "with `new_str` (taken literally). old_str must occur exactly once: "
                       "include enough surrounding text to make it unique.",
                       schema(old_str={**text, "description": "exact text to replace"},
                              new_str={**text, "description": "replacement text"})),
        ToolDefinition("insert", "Inserts `insert_text` as new lines after line `insert_line` "
                       "(0 = top of the file, the file's line count = the end).",
                       schema(insert_line={"type": "integer", "minimum": 0},
                              insert_text={**text, "description": "the lines to insert"})),
    ]


class ToolError(Exception):
    """A tool call the model can correct; the message goes back to it as an error result."""


@dataclass(frozen=True)
class Change:
    """One edit an update staged (its file gets a revision when the group is applied)."""

    filename: str
    action: str


class CortexToolbox:
    """Executes one update job's tool calls on its staged files (`executor` of tool_request)."""

    def __init__(self, cortex: CortexService, staged: StagedEdits, *,
                 follow_files: bool = True) -> None:
        self._cortex = cortex
        self._follow = follow_files  # False in review mode: the run edits a proposal's text
        self.review = not follow_files
        self.staged = staged
        self._persona_id = staged.persona_id
        self._unseen: dict[str, int] = {}  # file -> revision the model saw before a person's edit
        self.changes: list[Change] = []

    def __call__(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """Runs one tool call under the persona's lock; returns (ok, text for the model)."""
        handler = getattr(self, f"_tool_{name}", None) if name in TOOL_NAMES else None
        try:
            if handler is None:
                raise ToolError(f'Unknown tool "{name}". The tools are: {", ".join(TOOL_NAMES)}.')
            if not isinstance(arguments, dict):
                raise ToolError("The tool input must be a JSON object.")
            filename = _filename(arguments)
            with self._cortex.lock(self._persona_id):
                if not persona_exists(self._cortex.db.conn(), self._persona_id):
                    raise ToolError("This persona has been deleted; its files are gone. Stop "
                                    "here without further tool calls.")
                if self._follow:
                    self._refresh(filename, reading=name == "read_file")
            return True, handler(filename, arguments)
        except ToolError as err:
            log.info("Cortex tool %s refused for %s: %s", name, self._persona_id, err)
            return False, str(err)

    @property
    def files_changed(self) -> list[str]:
        """The files this job's staged edits change, in the cortex's file order."""
        return [f.filename for f in self.staged.changed_files()]

    def _refresh(self, filename: str, reading: bool) -> None:
        """Rebases the staged file on the current file if a person changed it meanwhile."""
        info = self._cortex.read_file_info(self._persona_id, filename)
        staged = self.staged.file(filename)
        seen = staged.base_revision
        try:
            if self.staged.rebase(filename, info.revision, info.content):
                self._unseen.setdefault(filename, seen)
        except StagingConflict:
            self.staged.reset(filename, info.revision, info.content)
            self._unseen.setdefault(filename, seen)
            if not reading:
                raise ToolError(
                    f"{filename} was changed (by the person) since you last saw it (revision "
                    f"{seen}, now revision {info.revision}), and your earlier edits to it no "
                    f"longer fit the new text, so they were dropped. Nothing was changed. Call "
                    f'read_file for "{filename}", then make your changes again, preferably with '
                    "str_replace or insert, so their edit is kept.") from None

    def _tool_read_file(self, filename: str, args: dict[str, Any]) -> str:
        staged = self.staged.file(filename)
        self._unseen.pop(filename, None)
        edited = " with your staged edits" if staged.edits else ""
        header = f"{filename}: revision {staged.base_revision}{edited}, " \
                 f"{self._meter(len(staged.content))}, {len(split_lines(staged.content))} lines."
        return f"{header}\n\n{staged.content}" if staged.content else \
            f"{header} (The file is empty.)"

    def _tool_write_file(self, filename: str, args: dict[str, Any]) -> str:
        content = _text(args, "content")
        staged = self.staged.file(filename)
        if filename in self._unseen:
            raise ToolError(
                f"Refused: {filename} was changed (by the person) since you last saw it: you saw "
                f"revision {self._unseen[filename]}, it is now revision {staged.base_revision}. "
                f'Nothing was written. Call read_file for "{filename}" to get the current '
                "text, then apply your change again, "
                "preferably with str_replace or insert, so their edit is kept.")
        if content == staged.content:
            return f"No change: {filename} already has exactly this content."
        self._stage(filename, "write_file", lambda: self.staged.write(filename, content))
        return self._done(filename, f"Wrote {filename}")

    def _tool_str_replace(self, filename: str, args: dict[str, Any]) -> str:
        old, new = _text(args, "old_str"), _text(args, "new_str")
        if not old:
            raise ToolError("old_str is empty. Give the exact text to replace; to add new lines "
                            "use insert, or str_replace with a nearby heading as old_str.")
        before = self.staged.file(filename).content
        after = self._stage(filename, "str_replace",
                            lambda: self.staged.str_replace(filename, old, new))
        if after == before:
            return f"No change: {filename} already reads like that."
        return self._done(filename, f"Replaced the text in {filename}")

    def _tool_insert(self, filename: str, args: dict[str, Any]) -> str:
        line, insert_text = args.get("insert_line"), _text(args, "insert_text")
        if isinstance(line, bool) or not isinstance(line, int):
            raise ToolError('Missing or invalid argument "insert_line": expected a whole number '
                            "(0 = top of the file).")
        self._stage(filename, "insert", lambda: self.staged.insert(filename, line, insert_text))
        return self._done(filename, f"Inserted {len(split_lines(insert_text)) or 1} line(s) "
                                    f"after line {line} of {filename}")

    def _stage(self, filename: str, action: str, edit: Callable[[], str]) -> str:
        """Runs a staging edit, turning its errors into texts the model can act on."""
        try:
            text = edit()
        except EditError as err:
            raise ToolError(_edit_error(filename, err, self._cortex.budget)) from None
        self.changes.append(Change(filename, action))
        return text

    def _done(self, filename: str, what: str) -> str:
        chars = len(self.staged.file(filename).content)
        note = "" if chars <= self._cortex.budget else \
            f" {filename} is over its budget: consolidate it (write_file with a shorter version)."
        return f"{what} (saved when this update finishes). {filename} now has " \
               f"{self._meter(chars)}.{note}"

    def _meter(self, chars: int) -> str:
        return f"{chars:,} / {self._cortex.budget:,} characters"


def _edit_error(filename: str, err: EditError, budget: int) -> str:
    """The model-facing text for an edit that does not apply."""
    details = err.details
    if err.kind == "not_found":
        return (f"old_str was not found in {filename} (it occurs 0 times). Nothing was "
                "changed. Copy old_str exactly from the current text, including spaces, "
                "punctuation and line breaks; call read_file to see the current text.")
    if err.kind == "ambiguous":
        return (f"old_str occurs {details['count']} times in {filename}, but must occur exactly "
                "once. Nothing was changed. Include more surrounding text (e.g. the whole line "
                "or the line before it) so it matches one place only.")
    if err.kind == "out_of_range":
        lines = details["lines"]
        return (f"insert_line {details['line']} is out of range: {filename} has {lines} lines, so insert_line "
                f"must be between 0 (top of the file) and {lines} (end of the file). Nothing "
                "was changed.")
    if err.kind == "too_large":
        chars, cap = details["chars"], details["cap"]
        return (f"Refused: {filename} would have {chars:,} characters, over the hard limit of "
                f"{cap:,} ({cap // budget} x the budget of {budget:,}). Nothing was written. "
                "Consolidate the file instead: merge duplicates, summarise older entries and "
                "drop what no longer matters, then write it within the budget.")
    if err.kind == "pinned":
        span = details["span"]
        if span == "added":
            return (f"Refused: this edit would add a pinned block or a pin marker to {filename}. "
                    "Only the person pins text; write it without <!-- pin --> or <!-- /pin --> "
                    "markers. Nothing was changed.")
        return (f"Refused: this edit would change or remove pinned text in {filename}: the "
                f"pinned block at {span.describe()}. Pinned text (from <!-- pin --> through "
                "<!-- /pin -->, markers included) belongs to the person: keep it exactly as it "
                "is and edit only around it. Nothing was changed.")
    return f"The text for {filename} is not valid Unicode text. Nothing was written."


def _filename(args: dict[str, Any]) -> str:
    filename = args.get("filename")
    if filename not in CORTEX_FILES:
        shown = filename if isinstance(filename, str) and len(filename) <= 60 else "(invalid)"
        raise ToolError(f'Unknown file "{shown}": the cortex has exactly three files, '
                        f"{', '.join(CORTEX_FILES)}. Nothing was changed.")
    return filename


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolError(f'Missing or invalid argument "{name}": expected a string.')
    return value
