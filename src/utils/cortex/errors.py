"""Errors the cortex raises; each maps to one JSON answer (routes/errors.DOMAIN_ERRORS)."""
from typing import Any

from ..models.cortex import CortexFile


class InvalidPersonaId(ValueError):
    """The persona id is not `default` or `^[a-z0-9]{8,32}$`; no path was built from it."""


class InvalidFilename(ValueError):
    """The filename is not one of memory.md, soul.md, relationship.md."""


class InvalidContent(ValueError):
    """The content is not a string that can be stored as UTF-8."""


class CortexSizeError(ValueError):
    """The content is over the hard cap; nothing was written."""

    def __init__(self, filename: str, chars: int, limit: int) -> None:
        super().__init__(
            f"{filename} would have {chars} characters; the limit is {limit}. "
            "Shorten or consolidate it; nothing was written.")
        self.filename, self.chars, self.limit = filename, chars, limit


class RevisionConflict(Exception):
    """The caller's expected revision is stale; `current` is the file as it is now."""

    def __init__(self, current: CortexFile, expected: int) -> None:
        super().__init__(
            f"{current.filename} is at revision {current.revision}, not {expected}: "
            "someone changed it meanwhile. Reload it and apply your change again.")
        self.current, self.expected = current, expected


class RevisionNotFound(LookupError):
    """No revision with that id exists for this persona and file."""

    def __init__(self, persona_id: str, filename: str, rev: object) -> None:
        super().__init__(f"{filename} of persona {persona_id} has no revision {rev}.")
        self.persona_id, self.filename, self.rev = persona_id, filename, rev


class UnsafePath(ValueError):
    """A cortex path resolves outside `<data_dir>/cortex` (e.g. through a symlink); not touched."""


class PersonaNotFound(LookupError):
    """The persona does not exist (or was deleted); nothing was read, created or written."""

    def __init__(self, persona_id: str) -> None:
        super().__init__(f"No persona {persona_id!r}: it does not exist or was deleted.")
        self.persona_id = persona_id


class ProposalNotFound(LookupError):
    """No proposal with that id exists for this persona (or it has no such file)."""


class ProposalDecided(Exception):
    """The proposal (or the file) was already accepted or rejected."""


class ProposalConflict(Exception):
    """A stale proposal's edits no longer apply to the current text; `files` is the conflict view."""

    def __init__(self, message: str, files: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.files = files
