"""Chat prompts from the texts in `src/instructions/prompts/` (helpers in `utils/prompts.py`).

The system prompt is a stable prefix (persona and cortex) marked for prompt caching; then the
user persona's description, stable per conversation, with a second breakpoint of its own, so
conversations of the persona under other user personas still hit the first (docs/about-you.md);
then what changes from turn to turn and so must come after the cache breakpoints: the world info
entries the conversation activated (docs/world-info.md), then the current time.
The shared helpers are re-exported so chat code keeps one name for its prompt vocabulary.
"""
import re
import threading
from collections import OrderedDict
from datetime import datetime, timedelta
from functools import lru_cache

from ..api_request.types import SystemBlock
from ..models.history import HistoryMessage
from ..models.personas import Persona
from ..prompts import (
    card_user_for,
    card_user_name,
    fence,
    language_of,
    load_prompt,
    render,
    user_for,
    user_name_for,
    weekday,
)
from . import card_macros

__all__ = ["CORTEX_KEYS", "card_user_for", "card_user_name", "fence", "format_time",
           "language_of", "load_prompt", "render", "system_blocks", "title_prompt", "user_for",
           "user_name_for"]
CORTEX_KEYS = ("cortex_memory", "cortex_soul", "cortex_relationship")
_EMPTY = {"en": "(empty)", "de": "(leer)"}


def system_blocks(persona: Persona, user_name: str, cortex: dict[str, str] | None,
                  language: str, now: datetime, world: list[str] | None = None,
                  about: str = "", card_user: str | None = None) -> list[SystemBlock]:
    """The cached persona+cortex prefix, then the user persona's description `about` (cached
    too; empty: no block), then the world info entries `world` (none: no block), then the
    current time; `cortex=None` injects nothing.

    Character-card fields are resolved (`{{char}}`, `{{user}}` as `card_user`, default
    `user_name`) and placed in their own sections; `creator_notes` is for people only and never
    enters a prompt.
    """
    stable = _STABLE.get(persona, user_name, card_user or user_name, language, cortex)
    moment = render(load_prompt("chat_time", language), {"now": format_time(now, language)})
    blocks = [SystemBlock(stable, cache=True, label="persona")]
    if about.strip():
        blocks.append(SystemBlock(about_text(persona, user_name, about, language), cache=True,
                                  label="about"))
    if world:
        blocks.append(SystemBlock(world_text(persona.name, world, language), label="world"))
    return [*blocks, SystemBlock(moment.strip(), label="time")]


def _stable_text(persona: Persona, user_name: str, card_user: str, language: str,
                 cortex: dict[str, str] | None) -> str:
    """The cached prefix: the persona's card sections and its cortex in the system template."""
    card = _card_values(persona, user_name, card_user, language)
    values = {"char_name": persona.name, "user_name": user_name, **card}
    if cortex is not None:
        for key in CORTEX_KEYS:
            values[key] = fence((cortex.get(key) or "").strip()) or _EMPTY[language]
    sections = {key: bool(card[key]) for key in _CARD_SECTIONS}
    stable = render(load_prompt("chat_system", language), values,
                    {"cortex": cortex is not None, **sections})
    return re.sub(r"\n{3,}", "\n\n", stable).strip()


class _StableTexts:
    """The prefix of each recent (persona, user, language, cortex) as last rendered: between
    two turns of a conversation none of them changes, and rendering it (templates, card
    macros, fences) was a sixth of the prompt's CPU (issue #23). The key holds every input
    `_stable_text` reads, by value, so an edit anywhere renders anew; nothing is shared
    between processes or outlives one."""

    def __init__(self, size: int = 256):
        self._size = size
        self._lock = threading.Lock()
        self._texts: OrderedDict[tuple, str] = OrderedDict()

    def get(self, persona: Persona, user_name: str, card_user: str, language: str,
            cortex: dict[str, str] | None) -> str:
        """The rendered prefix for these inputs (rendered now unless they were seen lately)."""
        key = (*(getattr(persona, name) for name in _STABLE_FIELDS),
               card_macros.char_name(persona), user_name, card_user, language,
               None if cortex is None else tuple(cortex.get(name) for name in CORTEX_KEYS))
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
                return text
        text = _stable_text(persona, user_name, card_user, language, cortex)
        with self._lock:
            self._texts[key] = text
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)
        return text


# The persona fields `_stable_text` reads (besides `{{char}}`, `card_macros.char_name`).
_STABLE_FIELDS = ("name", "description", "personality", "scenario", "greeting",
                  "example_dialogue", "system_prompt", "use_card_prompts")
_STABLE = _StableTexts()


def about_text(persona: Persona, user_name: str, description: str, language: str) -> str:
    """The "About <name>" section: the user persona's description, `{{char}}`/`{{user}}`
    resolved as in the card's text, fenced so it cannot close its tag."""
    text = card_macros.resolve(description.strip(), card_macros.char_name(persona), user_name)
    values = {"user_name": user_name, "description": fence(text)}
    return render(load_prompt("chat_user", language), values).strip()


def world_text(char_name: str, entries: list[str], language: str) -> str:
    """The world info section: the entries' texts in prompt order, one per line as SillyTavern
    joins them, fenced so none can close the section."""
    values = {"char_name": char_name, "entries": fence("\n".join(entries))}
    return render(load_prompt("chat_world", language), values).strip()


_CARD_SECTIONS = ("greeting", "personality", "scenario", "example_dialogue")


def _card_values(persona: Persona, user_name: str, card_user: str,
                 language: str) -> dict[str, str]:
    """The persona's card text for the system prompt, placeholders resolved."""
    char = card_macros.char_name(persona)

    def text(field: str) -> str:
        return card_macros.resolve(getattr(persona, field).strip(), char, card_user)
    intro = render(load_prompt("chat_intro", language), {"char_name": persona.name,
                                                         "user_name": user_name}).strip()
    system = text("system_prompt") if persona.use_card_prompts else ""
    return {"intro": system.replace("{{original}}", intro) if system else intro,
            "char_description": text("description"), "personality": text("personality"),
            "scenario": text("scenario"), "greeting": fence(text("greeting")),
            "example_dialogue": fence(text("example_dialogue"))}


def post_history_instructions(persona: Persona, user_name: str) -> str:
    """The card's instructions for after the conversation, or '' (switched off or none)."""
    if not persona.use_card_prompts:
        return ""
    char = card_macros.char_name(persona)
    return card_macros.resolve(persona.post_history_instructions.strip(), char,
                               user_name)


def with_post_history(history: list[HistoryMessage], instructions: str) -> list[dict]:
    """The request's `messages`: the history's turns, with the card's post-history instructions
    as a second text block of the last user turn (after the conversation, where cards expect
    them) when there are any."""
    turns: list[dict] = [message.turn() for message in history]
    if not instructions or not history or history[-1].role != "user":
        return turns
    blocks = [{"type": "text", "text": history[-1].content},
              {"type": "text", "text": f"<post_history_instructions>\n{fence(instructions)}\n"
                                       "</post_history_instructions>"}]
    turns[-1] = {"role": "user", "content": blocks}
    return turns


def format_time(now: datetime, language: str) -> str:
    """An absolute, unambiguous local time such as `Tuesday, 2025-06-03 14:05 (UTC+02:00)`."""
    return _minute_text(now.replace(second=0, microsecond=0), now.utcoffset(), language)


@lru_cache(maxsize=16)
def _minute_text(minute: datetime, offset: timedelta | None, language: str) -> str:
    """`format_time` of a whole minute (every turn of that minute asks for the same text);
    `offset` is in the key because aware datetimes of one instant compare equal whatever
    their zone (a clock change keeps the instant and changes the text)."""
    shown = minute.strftime("%z")
    zone = f"UTC{shown[:3]}:{shown[3:]}" if shown else "UTC"
    return f"{weekday(minute, language)}, {minute:%Y-%m-%d %H:%M} ({zone})"


def title_prompt(persona: Persona, user_name: str, user_text: str, reply_text: str,
                 language: str) -> str:
    """The instruction asking for a short session title from the first exchange."""
    values = {"char_name": persona.name, "user_name": user_name,
              "user_message": fence(user_text[:2000]), "assistant_message": fence(reply_text[:2000])}
    return render(load_prompt("chat_title", language), values).strip()
