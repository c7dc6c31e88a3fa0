"""One persona as a portable archive: the persona, its avatar, sessions, messages and the whole
cortex revision history, in a zip with a checksummed manifest.

Importing never merges: the persona, its sessions and its messages get new ids, and every
reference (a message's session, a revision's message range, the cortex's "processed up to"
mark) is remapped to them. Reading is as strict as for cards (SafeZip; every entry listed in the
manifest with its sha256, nothing else).
"""
import hashlib
import io
import json
import sqlite3
import zipfile
from typing import Any

from ..cortex.paths import CORTEX_FILES
from ..services.errors import ServiceError
from ..storage import avatars as avatar_store, persona_rows
from .cards import strict_loads
from .errors import invalid_archive, known_version
from .safezip import SafeZip, ZipLimits

FORMAT = "persona-cortex-persona"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ENTRIES = ("persona.json", "sessions.json", "messages.json", "revisions.json", "state.json")
LIMITS = ZipLimits(max_entries=16, max_total=256 * 1024 * 1024, max_entry=128 * 1024 * 1024,
                   max_ratio=200)
_PERSONA_KEYS = ("name", "description", "user_name", "language", "greeting", "personality",
                 "scenario", "example_dialogue", "alternate_greetings", "creator_notes",
                 "system_prompt", "post_history_instructions", "use_card_prompts", "tags",
                 "extensions", "card")


def is_archive(archive: SafeZip) -> bool:
    """True when the zip is one of our persona archives (rather than a CHARX)."""
    return MANIFEST in archive.names() and "persona.json" in archive.names()


def read_rows(conn: sqlite3.Connection, persona: dict) -> dict:
    """What the archive of `persona` holds, read from `conn` (call inside one read transaction):
    `{entries, avatar}`, plain values that `pack` turns into the zip off the event loop."""
    pid = persona["id"]
    stored = persona_rows.read_history(conn, pid)
    entries = {
        "persona.json": {k: persona[k] for k in _PERSONA_KEYS},
        "sessions.json": stored["sessions"], "messages.json": stored["messages"],
        "revisions.json": stored["revisions"],
        "state.json": {"last_processed_id": stored["last_processed_id"]},
    }
    avatar = avatar_store.get_avatar(conn, pid)
    return {"entries": entries, "avatar": avatar["data"] if avatar else None}


def pack(rows: dict) -> bytes:
    """The zip of `read_rows`' result: JSON entries, the avatar and the checksummed manifest
    (seconds of CPU for a long history: callers run it through `cooperative.offload`)."""
    files = {name: json.dumps(value, ensure_ascii=False).encode("utf-8")
             for name, value in rows["entries"].items()}
    if rows["avatar"]:
        files["avatar"] = rows["avatar"]
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "entries": [{"path": n, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
                            for n, d in sorted(files.items())]}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    return out.getvalue()


def read(archive: SafeZip) -> dict:
    """`{persona, sessions, messages, revisions, state, avatar}` after every check."""
    try:
        manifest = json.loads(archive.read(MANIFEST, 1024 * 1024))
    except (ValueError, UnicodeDecodeError):
        raise invalid_archive("bad_manifest", "The archive's manifest is not valid JSON.") \
            from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or \
            not known_version(manifest.get("format_version"), (FORMAT_VERSION,)) or \
            not isinstance(manifest.get("entries"), list):
        raise invalid_archive("bad_manifest", "This is not a persona archive this app can read.")
    listed = {e.get("path"): e.get("sha256") for e in manifest["entries"] if isinstance(e, dict)}
    if set(listed) != set(archive.names()) - {MANIFEST} or not set(ENTRIES) <= set(listed):
        raise invalid_archive("checksum_mismatch", "The archive's entries do not match its "
                              "manifest.")
    data = {}
    for name, expected in listed.items():
        raw = archive.read(str(name))  # every key is an entry's name: checked above
        if hashlib.sha256(raw).hexdigest() != expected:
            raise invalid_archive("checksum_mismatch", f"The archive entry {name} does not match "
                                  "its checksum.")
        data[name] = raw
    parsed = {name.removesuffix(".json"): _json(data[name], name) for name in ENTRIES}
    parsed["avatar"] = data.get("avatar")
    _check_shapes(parsed)
    return parsed


def _json(raw: bytes, name: str) -> Any:
    """Strict JSON whose every string can be stored (no lone surrogates)."""
    try:
        value = strict_loads(raw.decode("utf-8"))
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except (ValueError, UnicodeError, RecursionError):
        raise invalid_archive("bad_entry", f"The archive entry {name} is not valid JSON "
                              "text.") from None


def _check_shapes(parsed: dict) -> None:
    """Refuses entries whose rows are not what this app writes (types and references)."""
    def bad(what: str) -> ServiceError:
        return invalid_archive("bad_entry", f"The archive's {what} are malformed.")
    if not isinstance(parsed["persona"], dict) or not isinstance(parsed["state"], dict):
        raise bad("persona")
    sessions = parsed["sessions"]
    if not isinstance(sessions, list) or not all(
            isinstance(s, dict) and isinstance(s.get("title"), str)
            and isinstance(s.get("created_at"), str) and isinstance(s.get("updated_at"), str)
            and isinstance(s.get("greeting_index", 0), int) for s in sessions):
        raise bad("sessions")
    ids = {s.get("id") for s in sessions}
    if len(ids) != len(sessions):
        raise bad("sessions")
    messages = parsed["messages"]
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and m.get("session_id") in ids
            and isinstance(m.get("id"), int) and m.get("role") in ("user", "assistant")
            and isinstance(m.get("content"), str) and m.get("status") in ("complete", "incomplete")
            and isinstance(m.get("created_at"), str) for m in messages):
        raise bad("messages")
    revisions = parsed["revisions"]
    if not isinstance(revisions, list) or not all(
            isinstance(r, dict) and r.get("filename") in CORTEX_FILES
            and r.get("author") in ("user", "ai", "template", "restore", "external")
            and isinstance(r.get("content"), str) and isinstance(r.get("created_at"), str)
            for r in revisions):
        raise bad("revisions")
