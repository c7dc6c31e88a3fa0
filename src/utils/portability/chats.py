"""Chat files to conversation trees: SillyTavern `.jsonl` chats and our own JSON exports.

A SillyTavern chat is one JSON object per line: a header (`user_name`, `character_name`,
`create_date`, `chat_metadata`), then messages (`name`, `is_user`, `is_system`, `mes`,
`send_date`, `swipes`, `swipe_id`, `swipe_info`, `extra`), as its `saveChat` writes them. A
message's swipes become sibling branches under the same parent, in swipe order; the chosen one
(`swipe_id`, whose text is `mes`) is on the active branch and carries the conversation on.
`is_system` messages (narration, hidden messages) were outside SillyTavern's prompt and are
skipped. Our export (`GET /api/sessions/<sid>/export?format=json`) is one JSON document whose
messages (the active branch) and `alternatives` (the rest of the tree) name their `parent_id`;
its last message on the active branch is the active leaf.

Parsing is pure and checks everything first (docs/chat-import.md lists the limits), so the
caller can store the result in one transaction or refuse the file without touching anything.
"""
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..limits import CHAT_IMPORT
from ..storage.clock import utc_now
from ..text import is_encodable
from .cards import strict_loads
from .chat_dates import parse_date
from .errors import invalid_chat, too_large

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
C = TypeVar("C", list, dict)  # the shapes `_object_or` falls back to
_ROLES = ("user", "assistant")


@dataclass
class ChatNode:
    """One message to store: `parent` is the index of its parent node (None for a root)."""
    role: str
    content: str
    created_at: str
    parent: int | None
    status: str = "complete"


@dataclass
class ParsedChat:
    """A whole conversation tree, checked and ready to store."""
    format: str
    title: str
    nodes: list[ChatNode] = field(default_factory=list)
    active_leaf: int | None = None
    user_name: str = ""
    character_name: str = ""
    names: list[str] = field(default_factory=list)
    skipped: int = 0
    undated: int = 0


def read_chat(data: bytes) -> ParsedChat:
    """The conversation in `data` (a SillyTavern `.jsonl` or our JSON export); a 4xx for
    anything that is not one, or that is over a limit."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise invalid_chat("invalid_utf8", "The file is not valid UTF-8 text.") from None
    lines = text.split("\n")
    if len(lines) > CHAT_IMPORT["lines"]:
        raise too_large("too_many_lines", f"The file has more than {CHAT_IMPORT['lines']} lines.")
    first = _first_line(lines)
    if first is None:
        raise invalid_chat("empty_chat", "The file holds no messages.")
    if first.strip() == "{" or first.strip().startswith('{"session"'):
        return _from_export(_loads(text, 1, whole=True))
    return _from_jsonl(lines)


def _first_line(lines: list[str]) -> str | None:
    return next((line for line in lines if line.strip()), None)


def _loads(text: str, number: int, whole: bool = False) -> Any:
    if not whole and len(text.encode("utf-8", "surrogatepass")) > CHAT_IMPORT["line_bytes"]:
        raise too_large("line_too_long", f"Line {number} is longer than "
                        f"{CHAT_IMPORT['line_bytes']} bytes.")
    where = "The file" if whole else f"Line {number}"
    try:
        return strict_loads(text)
    except RecursionError:
        raise invalid_chat("too_deep", f"{where} nests JSON too deeply.") from None
    except ValueError:
        raise invalid_chat("invalid_json", f"{where} is not valid JSON.") from None


def _string(value: object, where: str, limit: int, reason: str = "message_too_long") -> str:
    """A stored string: text, no lone surrogate or control character, within `limit`."""
    if not isinstance(value, str):
        raise invalid_chat("wrong_type", f"{where} must be a string.")
    if not is_encodable(value):
        raise invalid_chat("invalid_text", f"{where} contains a lone surrogate (not Unicode "
                           "text).")
    if _CONTROL.search(value):
        raise invalid_chat("control_characters", f"{where} contains control characters.")
    if len(value) > limit:
        raise too_large(reason, f"{where} is longer than {limit} characters.")
    return value


def _flag(value: object, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid_chat("wrong_type", f"{where} must be true or false.")
    return value


class _Builder:
    """Appends nodes in an order where every parent comes before its children."""

    def __init__(self, chat: ParsedChat, fallback: str):
        self.chat = chat
        self.last_date = fallback

    def date(self, value: object) -> str:
        parsed = parse_date(value)
        if parsed is None:
            self.chat.undated += 1
            return self.last_date
        self.last_date = parsed
        return parsed

    def add(self, node: ChatNode) -> int:
        if len(self.chat.nodes) >= CHAT_IMPORT["messages"]:
            raise too_large("too_many_messages", f"The chat holds more than "
                            f"{CHAT_IMPORT['messages']} messages (swipes included).")
        self.chat.nodes.append(node)
        return len(self.chat.nodes) - 1


def _from_jsonl(lines: list[str]) -> ParsedChat:
    chat = ParsedChat(format="sillytavern", title="")
    objects = [(number, _loads(line, number)) for number, line in enumerate(lines, start=1)
               if line.strip()]
    for number, value in objects:
        if not isinstance(value, dict):
            raise invalid_chat("not_a_message", f"Line {number} is not a JSON object.")
    start = 0
    header = objects[0][1]
    if "mes" not in header:
        start = 1
        chat.user_name = _name(header.get("user_name"), "The header's user_name")
        chat.character_name = _name(header.get("character_name"), "The header's character_name")
    builder = _Builder(chat, parse_date(header.get("create_date")) or utc_now())
    parent: int | None = None
    names: dict[str, None] = {}
    for number, message in objects[start:]:
        where = f"Line {number}"
        if _flag(message.get("is_system"), f"{where}: is_system"):
            chat.skipped += 1
            continue
        names.setdefault(_name(message.get("name"), f"{where}: name"), None)
        parent = _add_message(builder, message, where, parent)
    if not chat.nodes:
        raise invalid_chat("empty_chat", "The file holds no messages.")
    chat.active_leaf = parent
    chat.names = [name for name in names if name][:20]
    chat.title = _title(chat)
    return chat


def _name(value: object, where: str) -> str:
    return "" if value is None else _string(value, where, CHAT_IMPORT["name_chars"],
                                            "name_too_long")


def _add_message(builder: _Builder, message: dict, where: str, parent: int | None) -> int:
    """Adds the message (and its swipes as siblings); returns the node the chat goes on from."""
    role = "user" if _flag(message.get("is_user"), f"{where}: is_user") else "assistant"
    content = _string(message.get("mes"), f"{where}: mes", CHAT_IMPORT["message_chars"])
    date = builder.date(message.get("send_date"))
    swipes = message.get("swipes")
    if swipes is None or (isinstance(swipes, list) and len(swipes) <= 1):
        return builder.add(ChatNode(role, content, date, parent))
    if not isinstance(swipes, list):
        raise invalid_chat("wrong_type", f"{where}: swipes must be a list of strings.")
    if len(swipes) > CHAT_IMPORT["swipes"]:
        raise too_large("too_many_swipes", f"{where} has more than {CHAT_IMPORT['swipes']} "
                        "swipes.")
    texts = [_string(s, f"{where}: swipes[{i}]", CHAT_IMPORT["message_chars"])
             for i, s in enumerate(swipes)]
    chosen = _chosen(message.get("swipe_id"), texts, content, where)
    info = _object_or(message.get("swipe_info"), list)
    nodes = []
    for index, text in enumerate(texts):
        dated = info[index].get("send_date") if index < len(info) and isinstance(
            info[index], dict) else None
        when = parse_date(dated) or date
        nodes.append(builder.add(ChatNode(role, content if index == chosen else text, when,
                                          parent)))
    return nodes[chosen]  # `_chosen` is an index of `texts`


def _object_or(value: object, kind: type[C]) -> C:
    """`value` when it is a `kind` (list or dict), else an empty one: optional parts we read
    only when they have the right shape."""
    return value if isinstance(value, kind) else kind()


def _chosen(swipe_id: object, texts: list[str], content: str, where: str) -> int:
    """The index of the swipe shown (SillyTavern keeps `mes` equal to it); an id out of range
    falls back to the swipe whose text is `mes`, else the first."""
    if swipe_id is not None and (isinstance(swipe_id, bool) or not isinstance(swipe_id, int)):
        raise invalid_chat("wrong_type", f"{where}: swipe_id must be an integer.")
    if isinstance(swipe_id, int) and 0 <= swipe_id < len(texts):
        return swipe_id
    return texts.index(content) if content in texts else 0


def _title(chat: ParsedChat) -> str:
    who = chat.character_name or "SillyTavern"
    return one_line(f"{who} ({chat.nodes[0].created_at[:10]})")


def one_line(title: str) -> str:
    """`title` as every session title is (one line, at most 120 characters): a name or a
    title from a file may hold line breaks, which a title set over the API may not."""
    return " ".join(title.split())[:120]


def _from_export(document: object) -> ParsedChat:
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise invalid_chat("not_a_chat", "The file is neither a SillyTavern chat (.jsonl) nor "
                           "a conversation exported from Persona Cortex.")
    session = _object_or(document.get("session"), dict)
    persona = _object_or(document.get("persona"), dict)
    chat = ParsedChat(format="persona_cortex", title="")
    title = session.get("title")
    chat.title = one_line(_string(title, "session.title", 120, "name_too_long")) if title else ""
    chat.character_name = _name(persona.get("name"), "persona.name")
    builder = _Builder(chat, parse_date(session.get("created_at")) or utc_now())
    index_of: dict[int, int] = {}
    for where, message, on_branch in _export_entries(document):
        node = _export_node(builder, message, where, index_of)
        message_id = message.get("id")
        if isinstance(message_id, int) and not isinstance(message_id, bool):
            index_of[message_id] = node
        if on_branch:
            chat.active_leaf = node
    if not chat.nodes:
        raise invalid_chat("empty_chat", "The file holds no messages.")
    chat.title = chat.title or _title(chat)
    return chat


def _export_entries(document: dict) -> list[tuple[str, dict, bool]]:
    """(where, message, on the active branch) for the active branch and its `alternatives`,
    in id order when there are alternatives (a parent's id is below its children's)."""
    alternatives = document.get("alternatives", [])
    if not isinstance(alternatives, list):
        raise invalid_chat("wrong_type", "alternatives must be a list of messages.")
    entries = [(f"messages[{i}]", m, True) for i, m in enumerate(document["messages"])] + [
        (f"alternatives[{i}]", m, False) for i, m in enumerate(alternatives)]
    for where, message, _ in entries:
        if not isinstance(message, dict):
            raise invalid_chat("not_a_message", f"{where} is not a JSON object.")
        if alternatives and (not isinstance(message.get("id"), int)
                             or isinstance(message.get("id"), bool)):
            raise invalid_chat("wrong_type", f"{where}: id must be an integer.")
    return sorted(entries, key=lambda entry: entry[1]["id"]) if alternatives else entries


def _export_node(builder: _Builder, message: dict, where: str, index_of: dict[int, int]) -> int:
    role = message.get("role")
    if role not in _ROLES:
        raise invalid_chat("wrong_type", f"{where}: role must be user or assistant.")
    parent_id = message.get("parent_id")
    if parent_id is not None and (not isinstance(parent_id, int) or isinstance(parent_id, bool)
                                  or parent_id not in index_of):
        raise invalid_chat("unknown_parent", f"{where}: parent_id names no earlier message.")
    status = "complete" if message.get("status", "complete") == "complete" else "incomplete"
    content = _string(message.get("content"), f"{where}: content", CHAT_IMPORT["message_chars"])
    return builder.add(ChatNode(role, content, builder.date(message.get("created_at")),
                                None if parent_id is None else index_of[parent_id], status))
