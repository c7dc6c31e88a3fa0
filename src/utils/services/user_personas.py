"""User personas, "About you" (DESIGN §16, docs/about-you.md): who the person is.

A user persona has a name, a description and an optional avatar (re-encoded like a persona's).
The first one made becomes the default; new sessions record the default, and a conversation can
pick another. Deleting one sends the sessions that used it back to the default. Everything is
checked before anything is written: a bad field is a 400 and changes nothing.
"""
import logging
from typing import Any

from ..cooperative import offload
from ..limits import USER_PERSONAS
from ..models import parse
from ..models.sessions import Session
from ..models.user_personas import (
    UserPersona,
    UserPersonaCreate,
    UserPersonaList,
    UserPersonaPatch,
)
from ..portability import images
from ..storage import (
    Database,
    avatars as avatar_store,
    sessions as session_store,
    user_personas as store,
)
from . import validation as check
from .errors import ServiceError, not_found
from .ids import is_session_id

log = logging.getLogger(__name__)
FIELDS = ("name", "description")


def _fields(data: dict, *, creating: bool) -> dict[str, str]:
    """The checked `name` / `description` of a request body (unknown fields are a 400)."""
    model = UserPersonaCreate if creating else UserPersonaPatch
    cleaned = {name: value for name, value in parse(model, data).given().items()
               if name in FIELDS}
    if "description" in cleaned:
        cleaned["description"] = cleaned["description"].strip()
    return cleaned


def user_persona_id(value: object) -> int:
    """A user persona id from a request (a positive integer), else a 400."""
    return check.integer("user_persona_id", value, low=1, high=2**63 - 1)


class UserPersonaService:
    """Lists, creates, changes and deletes user personas; picks the default and a session's."""

    def __init__(self, db: Database):
        self._db = db

    def list(self) -> UserPersonaList:
        """Every user persona (the default first) and the default's id (None: there is none)."""
        items = store.list_all(self._db.conn())
        default = next((item.id for item in items if item.is_default), None)
        return UserPersonaList(user_personas=items, default_id=default)

    def get(self, upid: int) -> UserPersona:
        """The user persona `upid`; 404 when there is none."""
        found = store.get(self._db.conn(), upid) if 0 < upid < 2**63 else None
        if found is None:
            raise not_found("user_persona", str(upid))
        return found

    def create(self, data: dict) -> UserPersona:
        """A new user persona; the default when asked (`is_default`) or when it is the first."""
        cleaned = _fields(data, creating=True)
        wanted = data.get("is_default", False)
        with self._db.transaction() as conn:
            if store.count(conn) >= USER_PERSONAS:
                raise ServiceError(409, "too_many_user_personas",
                                   f"There can be at most {USER_PERSONAS} user personas.")
            first = store.get_default(conn) is None
            new_id = store.create(conn, cleaned["name"], cleaned.get("description", ""),
                                  wanted or first)
        log.info("User persona %d created", new_id)
        return self.get(new_id)

    def update(self, upid: int, data: dict) -> UserPersona:
        """Changes the fields given (`name`, `description`)."""
        cleaned = _fields(data, creating=False)
        self.get(upid)
        if cleaned:
            with self._db.transaction() as conn:
                if not store.update(conn, upid, cleaned):
                    raise not_found("user_persona", str(upid))
        return self.get(upid)

    def make_default(self, upid: int) -> UserPersonaList:
        """Makes `upid` the default (new sessions and sessions without a choice use it)."""
        with self._db.transaction() as conn:
            if store.get(conn, upid) is None:
                raise not_found("user_persona", str(upid))
            store.make_default(conn, upid)
        return self.list()

    def delete(self, upid: int) -> UserPersonaList:
        """Deletes it; its sessions follow the default again. The default can go only when it
        is the last one (else pick another default first: 409 `default_user_persona`)."""
        with self._db.transaction() as conn:
            found = store.get(conn, upid)
            if found is None:
                raise not_found("user_persona", str(upid))
            others = store.count(conn, other_than=upid)
            if found.is_default and others:
                raise ServiceError(409, "default_user_persona",
                                   "This is the default user persona: make another one the "
                                   "default before deleting it.")
            store.delete(conn, upid)
        log.info("User persona %d deleted", upid)
        return self.list()

    def avatar(self, upid: int) -> dict[str, Any]:
        """The stored picture (`mime`, `data`, `sha256`, …: what `avatar_response` serves)."""
        self.get(upid)
        avatar = avatar_store.get_avatar(self._db.conn(), upid, avatar_store.USER_PERSONA)
        if avatar is None:
            raise ServiceError(404, "avatar_not_found", "This user persona has no avatar.")
        return avatar

    def set_avatar(self, upid: int, data: bytes) -> UserPersona:
        """Re-encodes an uploaded picture and stores it, as a persona's avatar: the header's
        pixel count is checked before anything decodes it, then the re-encoding runs in a child
        process (`offload`), so a hostile picture can neither flood memory nor stall the loop."""
        self.get(upid)
        images.check_header(data)
        image = offload(images.reencode, data)
        with self._db.transaction() as conn:
            if store.get(conn, upid) is None:
                raise not_found("user_persona", str(upid))
            avatar_store.put_avatar(conn, upid, image, avatar_store.USER_PERSONA)
        return self.get(upid)

    def delete_avatar(self, upid: int) -> UserPersona:
        """Removes the avatar; the user persona without it."""
        self.get(upid)
        with self._db.transaction() as conn:
            avatar_store.delete_avatar(conn, upid, avatar_store.USER_PERSONA)
        return self.get(upid)

    def choose_for_session(self, session_id: str, value: object) -> Session:
        """Sets the user persona a session uses (`None`: follow the default); the session."""
        upid = None if value is None else user_persona_id(value)
        with self._db.transaction() as conn:
            if not is_session_id(session_id) or session_store.get_session(
                    conn, session_id) is None:
                raise not_found("session", session_id)
            if upid is not None and store.get(conn, upid) is None:
                raise not_found("user_persona", str(upid))
            store.set_for_session(conn, session_id, upid)
            session = session_store.get_session(conn, session_id)
        if session is None:
            raise not_found("session", session_id)
        return session
