"""Ids of personas and sessions: random lowercase letters and digits, checked before any use."""
import re
import secrets
import string

PERSONA_ID_RE = re.compile(r"^[a-z0-9]{8,32}$")
SESSION_ID_RE = re.compile(r"^[a-z0-9]{16}$")
DEFAULT_PERSONA_ID = "default"
_ALPHABET = string.ascii_lowercase + string.digits


def new_id(length: int) -> str:
    """A random id of `length` characters from [a-z0-9]."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def is_persona_id(value: str) -> bool:
    """True for 'default' or a well-formed custom persona id (DESIGN §3)."""
    return value == DEFAULT_PERSONA_ID or bool(PERSONA_ID_RE.fullmatch(value or ""))


def is_session_id(value: str) -> bool:
    """True for a well-formed session id."""
    return bool(SESSION_ID_RE.fullmatch(value or ""))
