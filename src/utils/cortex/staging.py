"""StagedEdits: a run's cortex edits, held in memory until they are applied together.

A cortex update (and any later run that edits the cortex: review proposals, reconciliation,
consolidation) edits a staged copy of the files. Each edit runs with the same checks as a
direct write (`str_replace` must match exactly once, `insert` stays in range, the hard cap,
valid text) and is kept as an operation, so `CortexService.apply_staged` can make all of them
visible in one step, or none. If a person changed a file meanwhile, its operations are replayed
on the new text (`rebase`): a `str_replace` whose old text still occurs once, an `insert` whose
anchor line is still unique. A whole-file write cannot be replayed without losing the person's
edit, so it is a conflict: the person's edit always wins.
"""
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..models.cortex import CortexFile
from . import pins
from .paths import CORTEX_FILES


class EditError(Exception):
    """An edit that cannot apply to the text; `kind` says why, `details` by how much."""

    def __init__(self, kind: str, **details: Any) -> None:
        super().__init__(kind)
        self.kind = kind
        self.details = details


class StagingConflict(Exception):
    """A file changed under staged edits that cannot be replayed on its new text."""

    def __init__(self, filename: str, reason: str) -> None:
        super().__init__(f"{filename}: {reason}")
        self.filename = filename
        self.reason = reason


@dataclass(frozen=True)
class Edit:
    """One staged operation, with what it needs to be replayed on another text."""

    action: str
    args: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape kept on a failed job for inspection (and in a proposal)."""
        return {"action": self.action, **self.args}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Edit":
        """The edit `to_dict` describes."""
        args = {key: value for key, value in data.items() if key != "action"}
        return cls(data["action"], args)


@dataclass
class StagedFile:
    """One file: the revision the staged text builds on, the staged text and its edits."""

    filename: str
    base_revision: int
    base_content: str
    content: str
    edits: list[Edit] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True if applying would change the file."""
        return self.content != self.base_content


class StagedEdits:
    """The staged copy of one persona's three files and the edits made to it."""

    def __init__(self, persona_id: str, files: dict[str, tuple[int, str]], *,
                 hard_cap: int) -> None:
        self.persona_id = persona_id
        self.hard_cap = hard_cap
        self._files = {name: StagedFile(name, rev, text, text)
                       for name, (rev, text) in files.items() if name in CORTEX_FILES}

    def add_file(self, filename: str, base_revision: int, base_content: str, content: str,
                 edits: Iterable[Edit] = ()) -> StagedFile:
        """Stages a file whose edits were made earlier (a proposal): taken as they are."""
        self._files[filename] = StagedFile(filename, base_revision, base_content, content,
                                           list(edits))
        return self._files[filename]

    def file(self, filename: str) -> StagedFile:
        """The staged state of one file."""
        return self._files[filename]

    def shown(self, files: Iterable[CortexFile]) -> list[CortexFile]:
        """`files` as a run shows them to the model: each with its staged text and length."""
        return [info.model_copy(update={"content": self.file(info.filename).content,
                                        "chars": len(self.file(info.filename).content)})
                for info in files]

    def write(self, filename: str, content: str) -> str:
        """Stages a whole new text for the file; returns it."""
        return self._stage(filename, Edit("write_file", {"content": content}))

    def str_replace(self, filename: str, old: str, new: str) -> str:
        """Stages replacing the one occurrence of `old`; returns the new text."""
        return self._stage(filename, Edit("str_replace", {"old_str": old, "new_str": new}))

    def insert(self, filename: str, line: int, text: str) -> str:
        """Stages inserting `text` as lines after line `line`; returns the new text."""
        lines = split_lines(self._files[filename].content)
        anchor = lines[line - 1] if 0 < line <= len(lines) else None
        return self._stage(filename, Edit("insert", {
            "insert_line": line, "insert_text": text, "anchor": anchor,
            "at_end": line == len(lines)}))

    def rebase(self, filename: str, revision: int, content: str) -> bool:
        """Replays the file's edits on `content` (revision `revision`); True if the text the
        edits apply to changed. Raises StagingConflict (and changes nothing) if they do not fit."""
        staged = self._files[filename]
        if revision == staged.base_revision:
            return False
        if content == staged.base_content:
            staged.base_revision = revision
            return False
        text = content
        for edit in staged.edits:
            if edit.action == "write_file":
                raise StagingConflict(filename, "a whole-file write cannot be replayed")
            try:
                text = _replay(edit, text)
                self._check(text)
            except EditError as err:
                raise StagingConflict(filename, f"{edit.action} no longer applies "
                                                f"({err.kind})") from None
        if pins.violation(content, text) is not None:
            raise StagingConflict(filename, "the edits would change text pinned meanwhile")
        staged.base_revision, staged.base_content, staged.content = revision, content, text
        return True

    def reset(self, filename: str, revision: int, content: str) -> None:
        """Drops the file's edits and bases it on `content` (after a conflict)."""
        self._files[filename] = StagedFile(filename, revision, content, content)

    def changed_files(self) -> list[StagedFile]:
        """The files applying would change, in the cortex's file order."""
        return [self._files[name] for name in CORTEX_FILES
                if name in self._files and self._files[name].changed]

    def attempted(self) -> list[dict[str, Any]]:
        """Every staged edit (file, action, arguments), for inspecting a run that failed."""
        return [{"file": name, **edit.to_dict()}
                for name, staged in self._files.items() for edit in staged.edits]

    def _stage(self, filename: str, edit: Edit) -> str:
        staged = self._files[filename]
        text = _replay(edit, staged.content, initial=True)
        self._check(text)
        broken = pins.violation(staged.content, text)
        if broken is not None:
            raise EditError("pinned", span=broken)
        staged.content = text
        staged.edits.append(edit)
        return text

    def _check(self, text: str) -> None:
        if len(text) > self.hard_cap:
            raise EditError("too_large", chars=len(text), cap=self.hard_cap)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise EditError("invalid_text") from None


def _replay(edit: Edit, text: str, initial: bool = False) -> str:
    args = edit.args
    if edit.action == "write_file":
        return args["content"]
    if edit.action == "str_replace":
        return replace_once(text, args["old_str"], args["new_str"])
    line = args["insert_line"] if initial else _insert_position(edit, text)
    return insert_lines(text, line, args["insert_text"])


def _insert_position(edit: Edit, text: str) -> int:
    """Where an insert goes in a changed text: after its unique anchor line, or at the top or
    end where it was made; anything else is ambiguous."""
    args, lines = edit.args, split_lines(text)
    if args["insert_line"] == 0:
        return 0
    anchor = args["anchor"].rstrip("\n")
    found = [i for i, line in enumerate(lines) if line.rstrip("\n") == anchor]
    if len(found) == 1:
        return found[0] + 1
    if args["at_end"]:
        return len(lines)
    raise EditError("anchor_moved", count=len(found))


def replace_once(text: str, old: str, new: str) -> str:
    """`text` with the one occurrence of `old` replaced by `new`, taken literally."""
    count = text.count(old) if old else 0
    if count != 1:
        raise EditError("not_found" if count == 0 else "ambiguous", count=count)
    index = text.index(old)
    return text[:index] + new + text[index + len(old):]


def insert_lines(text: str, line: int, insert_text: str) -> str:
    """`text` with `insert_text` as whole lines after line `line` (0 = top)."""
    lines = split_lines(text)
    if not 0 <= line <= len(lines):
        raise EditError("out_of_range", lines=len(lines), line=line)
    if line and not lines[line - 1].endswith("\n"):
        lines[line - 1] += "\n"
    block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
    return "".join(lines[:line]) + block + "".join(lines[line:])


def split_lines(text: str) -> list[str]:
    """The lines of `text`, each keeping its '\\n' (only '\\n' breaks a line)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
