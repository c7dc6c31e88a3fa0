"""The tools a cortex update may call, and their executor for one update job.

Edits (`str_replace`, `insert`) go through `CortexService.edit_file`, so they apply to the file as
it is at that moment, under the persona's lock: a person's edit made meanwhile is kept. A
whole-file `write_file` is refused when the file changed since the model last saw it. Every
error text says what happened and what the model can do next; nothing is written on an error.
"""
import logging
from dataclasses import dataclass

from ..api_request.types import ToolDefinition
from .errors import CortexSizeError, InvalidContent, RevisionConflict
from .paths import CORTEX_FILES
from .personas_lookup import persona_exists

log = logging.getLogger(__name__)
TOOL_NAMES = ("read_file", "write_file", "str_replace", "insert")
_FILENAME = {"type": "string", "enum": list(CORTEX_FILES),
             "description": "memory.md (memories), soul.md (your development) or "
                            "relationship.md (the relationship)"}


def tool_definitions() -> list[ToolDefinition]:
    """The four cortex tools with their JSON schemas."""
    def schema(**properties) -> dict:
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


@dataclass
class _Seen:
    revision: int
    content: str


@dataclass(frozen=True)
class Change:
    """One successful change an update made."""

    filename: str
    action: str
    revision: int


class CortexToolbox:
    """Executes one update job's tool calls (the `executor` of `ApiClient.tool_request`)."""

    def __init__(self, cortex, persona_id: str, files: dict, *, job_id=None,
                 message_range=None):
        self._cortex = cortex
        self._persona_id = persona_id
        self._job_id = job_id
        self._range = message_range
        self._seen = {f.filename: _Seen(f.revision, f.content) for f in files.values()}
        self.changes: list[Change] = []

    def __call__(self, name: str, arguments: dict) -> tuple[bool, str]:
        """Runs one tool call under the persona's lock; returns (ok, text for the model)."""
        handler = getattr(self, f"_tool_{name}", None) if name in TOOL_NAMES else None
        try:
            if handler is None:
                raise ToolError(f'Unknown tool "{name}". The tools are: {", ".join(TOOL_NAMES)}.')
            if not isinstance(arguments, dict):
                raise ToolError("The tool input must be a JSON object.")
            with self._cortex.lock(self._persona_id):
                if not persona_exists(self._cortex.db.conn(), self._persona_id):
                    raise ToolError("This persona has been deleted; its files are gone. Stop "
                                    "here without further tool calls.")
                return True, handler(arguments)
        except ToolError as err:
            log.info("Cortex tool %s refused for %s: %s", name, self._persona_id, err)
            return False, str(err)

    @property
    def files_changed(self) -> list[str]:
        """The files this job changed, in the order first changed."""
        return list(dict.fromkeys(change.filename for change in self.changes))

    def _tool_read_file(self, args: dict) -> str:
        filename = _filename(args)
        info = self._cortex.read_file_info(self._persona_id, filename)
        self._seen[filename] = _Seen(info.revision, info.content)
        header = f"{filename}: revision {info.revision}, {self._meter(info.chars)}, " \
                 f"{len(split_lines(info.content))} lines."
        return f"{header}\n\n{info.content}" if info.content else f"{header} (The file is empty.)"

    def _tool_write_file(self, args: dict) -> str:
        filename, content = _filename(args), _text(args, "content")
        seen = self._seen.get(filename)
        if seen is None:
            raise ToolError(f'Call read_file for "{filename}" before you rewrite it.')
        self._check_size(filename, len(content))
        if content == seen.content:
            return f"No change: {filename} already has exactly this content."
        try:
            rev = self._write(lambda: self._cortex.write_file(
                self._persona_id, filename, content, author="ai",
                expected_revision=seen.revision, **self._details()), filename)
        except RevisionConflict as err:
            raise ToolError(
                f"Refused: {filename} was changed (by the person) since you last saw it: you saw "
                f"revision {err.expected}, it is now revision {err.current.revision}. Nothing was "
                f'written. Call read_file for "{filename}" to get the current text, then apply '
                "your change again, preferably with str_replace or insert, so their edit is "
                "kept.") from None
        self._seen[filename] = _Seen(rev, content)
        return self._done(filename, "write_file", rev, len(content), f"Wrote {filename}")

    def _tool_str_replace(self, args: dict) -> str:
        filename, old, new = _filename(args), _text(args, "old_str"), _text(args, "new_str")
        if not old:
            raise ToolError("old_str is empty. Give the exact text to replace; to add new lines "
                            "use insert, or str_replace with a nearby heading as old_str.")

        def replace(text: str) -> str:
            count = text.count(old)
            if count == 0:
                raise ToolError(
                    f"old_str was not found in {filename} (it occurs 0 times). Nothing was "
                    "changed. Copy old_str exactly from the current text, including spaces, "
                    "punctuation and line breaks; call read_file to see the current text.")
            if count > 1:
                raise ToolError(
                    f"old_str occurs {count} times in {filename}, but must occur exactly once. "
                    "Nothing was changed. Include more surrounding text (e.g. the whole line or "
                    "the line before it) so it matches one place only.")
            index = text.index(old)
            return text[:index] + new + text[index + len(old):]

        return self._edit(filename, "str_replace", replace, f"Replaced the text in {filename}")

    def _tool_insert(self, args: dict) -> str:
        filename, line = _filename(args), args.get("insert_line")
        insert_text = _text(args, "insert_text")
        if isinstance(line, bool) or not isinstance(line, int):
            raise ToolError('Missing or invalid argument "insert_line": expected a whole number '
                            "(0 = top of the file).")

        def insert(text: str) -> str:
            lines = split_lines(text)
            if not 0 <= line <= len(lines):
                raise ToolError(
                    f"insert_line {line} is out of range: {filename} has {len(lines)} lines, so "
                    f"insert_line must be between 0 (top of the file) and {len(lines)} (end of "
                    "the file). Nothing was changed.")
            if line and not lines[line - 1].endswith("\n"):
                lines[line - 1] += "\n"
            block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
            return "".join(lines[:line]) + block + "".join(lines[line:])

        return self._edit(filename, "insert", insert,
                          f"Inserted {len(split_lines(insert_text)) or 1} line(s) after line "
                          f"{line} of {filename}")

    def _edit(self, filename: str, action: str, transform, done: str) -> str:
        """Applies `transform` to the current text under the lock and records the change."""
        seen_text: dict[str, str] = {}

        def apply(text: str) -> str:
            result = transform(text)
            self._check_size(filename, len(result))
            seen_text.update(before=text, after=result)
            return result

        rev = self._write(lambda: self._cortex.edit_file(
            self._persona_id, filename, apply, author="ai", **self._details()), filename)
        if seen_text["before"] == seen_text["after"]:
            return f"No change: {filename} already reads like that."
        seen = self._seen.get(filename)
        if seen is not None and seen.content == seen_text["before"]:
            self._seen[filename] = _Seen(rev, seen_text["after"])
        return self._done(filename, action, rev, len(seen_text["after"]), done)

    def _write(self, write, filename: str) -> int:
        """Runs a store write, turning its size and content errors into tool errors."""
        try:
            return write()
        except CortexSizeError as err:
            self._check_size(filename, err.chars)
            raise ToolError(str(err)) from None
        except InvalidContent as err:
            raise ToolError(f"{err} Nothing was written.") from None

    def _done(self, filename: str, action: str, rev: int, chars: int, what: str) -> str:
        self.changes.append(Change(filename, action, rev))
        note = "" if chars <= self._cortex.budget else \
            f" {filename} is over its budget: consolidate it (write_file with a shorter version)."
        return f"{what} (revision {rev}). {filename} now has {self._meter(chars)}.{note}"

    def _check_size(self, filename: str, chars: int) -> None:
        budget, cap = self._cortex.budget, self._cortex.hard_cap
        if chars > cap:
            raise ToolError(
                f"Refused: {filename} would have {chars:,} characters, over the hard limit of "
                f"{cap:,} ({cap // budget} x the budget of {budget:,}). Nothing was written. "
                "Consolidate the file instead: merge duplicates, summarise older entries and "
                "drop what no longer matters, then write it within the budget.")

    def _meter(self, chars: int) -> str:
        return f"{chars:,} / {self._cortex.budget:,} characters"

    def _details(self) -> dict:
        return {"job_id": self._job_id, "message_range": self._range}


def split_lines(text: str) -> list[str]:
    """The lines of `text`, each keeping its '\\n' (only '\\n' breaks a line)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _filename(args: dict) -> str:
    filename = args.get("filename")
    if filename not in CORTEX_FILES:
        shown = filename if isinstance(filename, str) and len(filename) <= 60 else "(invalid)"
        raise ToolError(f'Unknown file "{shown}": the cortex has exactly three files, '
                        f"{', '.join(CORTEX_FILES)}. Nothing was changed.")
    return filename


def _text(args: dict, name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolError(f'Missing or invalid argument "{name}": expected a string.')
    return value
