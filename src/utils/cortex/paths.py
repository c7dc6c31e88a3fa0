"""Validation of persona ids and filenames, done before any path is built from them."""
import os
import re

from .errors import InvalidFilename, InvalidPersonaId, UnsafePath

CORTEX_FILES = ("memory.md", "soul.md", "relationship.md")
DEFAULT_PERSONA = "default"
_PERSONA_ID = re.compile(r"[a-z0-9]{8,32}", re.ASCII)


def validate_persona_id(persona_id: object) -> str:
    """Returns `persona_id` if it is `default` or 8–32 lowercase ASCII letters and digits."""
    if not isinstance(persona_id, str) or not (
            persona_id == DEFAULT_PERSONA or _PERSONA_ID.fullmatch(persona_id)):
        raise InvalidPersonaId(
            f"Invalid persona id {_shown(persona_id)}: use 'default' or 8 to 32 lowercase "
            "letters and digits.")
    return persona_id


def validate_filename(filename: object) -> str:
    """Returns `filename` if it is exactly one of CORTEX_FILES."""
    if not isinstance(filename, str) or filename not in CORTEX_FILES:
        raise InvalidFilename(
            f"No cortex file {_shown(filename)}: the files are {', '.join(CORTEX_FILES)}.")
    return filename


class CortexPaths:
    """Where cortex files live under `<data_dir>/cortex`; every path is checked to stay inside."""

    def __init__(self, data_dir: str) -> None:
        self.root = os.path.join(os.path.realpath(data_dir), "cortex")
        self.lock_dir = os.path.join(self.root, ".locks")
        # Resolved once: a `cortex` directory swapped for a symlink later resolves elsewhere,
        # which the check below refuses like any other escape.
        self._real_root = os.path.realpath(self.root)

    def persona_dir(self, persona_id: str) -> str:
        """`cortex/default` or `cortex/custom/<persona_id>`."""
        validate_persona_id(persona_id)
        return self._inside(self._unchecked_dir(persona_id), persona_id)

    def file(self, persona_id: str, filename: str) -> str:
        """The path of one cortex file (resolving it resolves its directories too, so one
        check covers a symlink anywhere on the way)."""
        validate_persona_id(persona_id)
        validate_filename(filename)
        return self._inside(os.path.join(self._unchecked_dir(persona_id), filename), persona_id)

    def stat_dir(self, persona_id: str) -> str:
        """The persona's directory without the symlink check, for `stat` comparisons only (a
        swapped directory changes the inodes; whatever is read goes through `file`)."""
        validate_persona_id(persona_id)
        return self._unchecked_dir(persona_id)

    def _unchecked_dir(self, persona_id: str) -> str:
        if persona_id == DEFAULT_PERSONA:
            return os.path.join(self.root, DEFAULT_PERSONA)
        return os.path.join(self.root, "custom", persona_id)

    def _inside(self, path: str, persona_id: str) -> str:
        real_root = self._real_root
        resolved = os.path.realpath(path)
        if resolved == real_root or os.path.commonpath([resolved, real_root]) != real_root:
            raise UnsafePath(f"The cortex of {persona_id!r} resolves outside the data directory.")
        return path


def _shown(value: object) -> str:
    """A short, printable rendering of untrusted input for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
