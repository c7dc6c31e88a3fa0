"""Reading an uploaded card or persona archive into checked values, without touching storage.

Everything here is pure computation on the upload's bytes (PNG chunks, zip directories, JSON,
the picture's decode and re-encode), so the services run it as one step off the event loop
(`cooperative.offload`) and only then take the persona's lock and open a transaction.
"""
from dataclasses import dataclass

from ..prompts import LANGUAGES
from ..services import persona_fields, validation as check
from ..services.errors import ServiceError, invalid
from . import archive, card_files, images
from .errors import invalid_archive, invalid_card
from .safezip import SafeZip


@dataclass(frozen=True)
class Upload:
    """A checked upload: a card (`card` is read_card's dict) or a persona archive (`parsed`)."""

    fields: dict
    avatar: dict | None
    card: dict | None = None
    parsed: dict | None = None


def read_upload(data: bytes, hard_cap: int) -> Upload:
    """The upload as a card or, for one of our persona archives, as an archive; a 4xx if refused."""
    if is_archive(data):
        return read_archive(data, hard_cap)
    card = card_files.read_card(data)
    fields = checked_fields(card["fields"])
    if card["cortex"] is not None:
        for filename, content in card["cortex"].items():
            check_cortex(filename, content, hard_cap)
    avatar = images.reencode(card["image"]) if card["image"] is not None else None
    return Upload(fields, avatar, card=card)


def read_archive(data: bytes, hard_cap: int) -> Upload:
    """A persona archive, every entry and field checked, its avatar re-encoded."""
    try:
        with SafeZip(data, archive.LIMITS, refuse=invalid_archive) as opened:
            parsed = archive.read(opened)
    except ServiceError as err:
        if err.code != "invalid_archive":
            raise
        raise invalid_card(err.extra["reason"], err.message) from None
    fields = checked_fields(parsed["persona"])
    if "name" not in fields:
        raise invalid_card("bad_entry", "The archive's persona has no name.")
    for rev in parsed["revisions"]:
        check_cortex(rev["filename"], rev["content"], hard_cap)
    avatar = images.reencode(parsed["avatar"]) if parsed["avatar"] else None
    return Upload(fields, avatar, parsed=parsed)


def is_archive(data: bytes) -> bool:
    """True for one of our persona archives (a zip with persona.json), checked safely."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with SafeZip(data, archive.LIMITS) as opened:
            return archive.is_archive(opened)
    except ServiceError:
        return False


def checked_fields(raw: dict) -> dict:
    """Persona fields from a card, checked like a POST; over-limit fields refuse the card."""
    try:
        fields = persona_fields.validate(raw)
        if "language" in raw:
            fields["language"] = check.choice("language", raw["language"], LANGUAGES)
    except ServiceError as err:
        if err.status == 400:
            raise invalid_card("field_invalid", f"The card's {err.message}") from None
        raise
    return fields


def check_cortex(filename: str, content: str, hard_cap: int) -> None:
    """Refuses a cortex file that is not encodable text or is over the hard cap."""
    try:
        persona_fields.encodable(filename, content)
        if len(content) > hard_cap:
            raise invalid(filename, f"must not be longer than {hard_cap} characters")
    except ServiceError as err:
        raise invalid_card("field_invalid", f"The card's cortex file {err.message}") from None
