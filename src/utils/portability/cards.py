"""Character Card V1, V2 and V3 objects to persona fields and back (DESIGN §12).

Follows character-card-spec-v2 `spec_v2.md` and character-card-spec-v3 `SPEC_V3.md`: a V2/V3
card's fields live in `data`; `extensions` is kept verbatim (our own key, `persona_cortex`, is
read and removed, so private memories are never stored where an export would repeat them); every
other field of `data` that has no persona column is kept under the persona's `card` object, so an
export gives it back unchanged. The lorebook (`character_book`) is taken out of `card` when the
persona is created and kept in the world info tables (`books.py`, docs/world-info.md).
"""
import base64
import binascii
import json
import time
from datetime import datetime
from typing import Any, NoReturn

from . import books
from .errors import MAX_CARD_JSON, invalid_card, too_large

OUR_EXTENSION = "persona_cortex"
V2_BACKFILL_NOTE = ("This character card is Character Card V3, but it is loaded as a Character "
                    "Card V2. Please use a Character Card V3 compatible application to use this "
                    "character card properly.")
_MAPPED = {"name": "name", "description": "description", "personality": "personality",
           "scenario": "scenario", "first_mes": "greeting", "mes_example": "example_dialogue",
           "creator_notes": "creator_notes", "system_prompt": "system_prompt",
           "post_history_instructions": "post_history_instructions"}
_LISTS = {"alternate_greetings": "alternate_greetings", "tags": "tags"}
_V1_FIELDS = ("description", "personality", "scenario", "first_mes", "mes_example")
_UNUSED = {"group_only_greetings": "group-only greetings are kept, not used (no group chats)",
           "creator_notes_multilingual": "translated creator notes are kept, only `creator_notes`"
                                         " is shown"}


def decode_text(text: str, where: str) -> dict:
    """A card carried as base64 of UTF-8 JSON (the PNG chunk encoding)."""
    compact = "".join(text.split())
    if len(compact) > MAX_CARD_JSON * 4 // 3 + 4:
        raise too_large("card_too_large", f"The card is larger than {MAX_CARD_JSON} bytes.")
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise invalid_card("invalid_base64", f"The {where} chunk is not valid base64.") from None
    return decode_json(raw, where)


def decode_json(raw: bytes, where: str = "card") -> dict:
    """Strict UTF-8 JSON (a leading BOM allowed); a 4xx for anything else."""
    if len(raw) > MAX_CARD_JSON:
        raise too_large("card_too_large", f"The card is larger than {MAX_CARD_JSON} bytes.")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise invalid_card("invalid_utf8", f"The {where} is not valid UTF-8.") from None
    try:
        value = strict_loads(text)
    except (ValueError, RecursionError):
        raise invalid_card("invalid_json", f"The {where} is not valid JSON.") from None
    if not isinstance(value, dict):
        raise invalid_card("not_a_card", f"The {where} is JSON but not a character card object.")
    return value


def parse(card: dict) -> dict:
    """`{version, fields, cortex, ignored}` from a card object; 400 `invalid_card` if it is none."""
    version, data = _version_and_data(card)
    fields: dict[str, Any] = {}
    ignored: list[str] = []
    for key, field in _MAPPED.items():
        fields[field] = _string(data, key, required=key == "name")
    for key, field in _LISTS.items():
        fields[field] = _strings(data, key)
    extensions = data.get("extensions", {})
    if not isinstance(extensions, dict):
        raise invalid_card("bad_field", "extensions: must be an object.")
    extensions = dict(extensions)
    ours = extensions.pop(OUR_EXTENSION, None)
    fields["extensions"] = extensions
    fields["card"] = {k: v for k, v in data.items()
                      if k not in _MAPPED and k not in _LISTS and k != "extensions"}
    if isinstance(data.get("assets"), list):
        fields["card"]["assets"] = [a for a in data["assets"] if not (
            isinstance(a, dict) and str(a.get("uri", "")).startswith(("embeded://", "data:")))]
    ignored += [note for key, note in _UNUSED.items() if data.get(key)]
    books.check_size(data.get("character_book"))
    if data.get("character_book") and not books.usable(data["character_book"]):
        ignored.append("the lorebook (character_book) is not a book with a list of entries: "
                       "it is kept, not used")
    ignored += [f"extension `{key}` is kept, not used" for key in extensions]
    if version == 3 and _newer(card.get("spec_version")):
        ignored.append(f"the card uses a newer spec version ({card.get('spec_version')}); "
                       "fields this app does not know are kept, not used")
    persona = _our_persona(ours)
    fields.update(persona)
    return {"version": version, "fields": fields, "cortex": _our_cortex(ours),
            "ignored": ignored}


def build(persona: dict, *, cortex: dict | None, version: int = 3) -> dict:
    """The persona as a V3 (or, for the PNG `chara` chunk, V2) card object."""
    card = dict(persona.get("card") or {})
    data = {key: persona.get(field) or "" for key, field in _MAPPED.items()}
    data.update({key: list(persona.get(field) or []) for key, field in _LISTS.items()})
    data.setdefault("creator", card.get("creator", ""))
    data.setdefault("character_version", card.get("character_version", ""))
    extensions = dict(persona.get("extensions") or {})
    extensions[OUR_EXTENSION] = _our_extension(persona, cortex)
    data["extensions"] = extensions
    if version == 2:
        kept = {k: card[k] for k in ("character_book",) if k in card}
        if data["creator_notes"]:
            data["creator_notes"] = V2_BACKFILL_NOTE + "\n\n" + data["creator_notes"]
        else:
            data["creator_notes"] = V2_BACKFILL_NOTE
        return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {**data, **kept}}
    data = {**card, **data}
    data.setdefault("group_only_greetings", [])
    data.setdefault("creation_date", _unix(persona.get("created_at")))
    data["modification_date"] = int(time.time())
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}


def _version_and_data(card: dict) -> tuple[int, dict]:
    spec = card.get("spec")
    if spec in ("chara_card_v3", "chara_card_v2"):
        data = card.get("data")
        if not isinstance(data, dict):
            raise invalid_card("not_a_card", f"The card says {spec} but has no `data` object.")
        return (3 if spec == "chara_card_v3" else 2), data
    if spec is None and isinstance(card.get("name"), str) and any(k in card for k in _V1_FIELDS):
        return 1, card
    raise invalid_card("not_a_card", "The JSON is not a character card (V1, V2 or V3): it has "
                       "no `spec` of chara_card_v2/chara_card_v3 and no V1 fields.")


def _string(data: dict, key: str, *, required: bool = False) -> str:
    value = data.get(key, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise invalid_card("bad_field", f"{key}: must be a string.")
    if required and not value.strip():
        raise invalid_card("bad_field", f"{key}: the card has no name.")
    return value.strip() if required else value


def _strings(data: dict, key: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_card("bad_field", f"{key}: must be a list of strings.")
    return value


def _our_persona(ours: object) -> dict:
    """The persona settings our own export carries (language, user name, card prompts switch)."""
    persona = ours.get("persona") if isinstance(ours, dict) else None
    if not isinstance(persona, dict):
        return {}
    return {k: persona[k] for k in ("language", "user_name", "use_card_prompts") if k in persona}


def _our_cortex(ours: object) -> dict[str, str] | None:
    """`{filename: content}` when our extension carries memories, else None."""
    cortex = ours.get("cortex") if isinstance(ours, dict) else None
    if cortex is None:
        return None
    files = cortex.get("files") if isinstance(cortex, dict) else None
    if not isinstance(files, dict) or not files:
        raise invalid_card("bad_field", "extensions.persona_cortex.cortex: must hold `files`.")
    result = {}
    for name, entry in files.items():
        content = entry.get("content") if isinstance(entry, dict) else None
        if name not in ("memory.md", "soul.md", "relationship.md") or not isinstance(content, str):
            raise invalid_card("bad_field", f"extensions.persona_cortex.cortex.files: "
                               f"unexpected entry {name[:40]!r}.")
        result[name] = content
    return result


def _our_extension(persona: dict, cortex: dict | None) -> dict:
    ours = {"format_version": 1,
            "persona": {"language": persona.get("language") or "en",
                        "user_name": persona.get("user_name") or "",
                        "use_card_prompts": bool(persona.get("use_card_prompts", True))}}
    if cortex is not None:
        ours["cortex"] = {"files": cortex}
    return ours


def _newer(spec_version: Any) -> bool:
    try:
        return float(spec_version) > 3.0
    except (TypeError, ValueError):
        return False


def _unix(timestamp: str | None) -> int:
    try:
        return int(datetime.fromisoformat(timestamp or "").timestamp())
    except ValueError:
        return 0


def strict_loads(text: str) -> Any:
    """`json.loads` without NaN/Infinity, written or reached by overflow (`1e400`): a stored
    non-finite number would make every later JSON answer and export of the persona invalid."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value
