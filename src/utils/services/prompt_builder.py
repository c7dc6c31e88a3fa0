"""Chat prompts from the texts in `src/instructions/prompts/`.

The system prompt is two blocks: a stable prefix (persona and cortex) marked for prompt caching,
then the current time, which changes every turn and so must come after the cache breakpoint.
Placeholders are filled in one pass, so text inside a value (a cortex file, a persona
description) is never itself treated as a placeholder.
"""
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from ..api_request.types import SystemBlock
from . import card_macros

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "instructions" / "prompts"
LANGUAGES = ("en", "de")
CORTEX_KEYS = ("cortex_memory", "cortex_soul", "cortex_relationship")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_SECTION = re.compile(r"\{\{#([a-z_]+)\}\}\n?(.*?)\{\{/\1\}\}\n?", re.S)
_FENCE_CLOSE = re.compile(r"</(cortex_[a-z]+|conversation|greeting|example_dialogue|"
                          r"post_history_instructions)", re.I)
_EMPTY = {"en": "(empty)", "de": "(leer)"}
_DEFAULT_USER = {"en": "the user", "de": "dein Gegenüber"}
_WEEKDAYS_DE = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")


def language_of(*candidates: str | None) -> str:
    """The first supported language among `candidates`, else English."""
    return next((c for c in candidates if c in LANGUAGES), "en")


@lru_cache(maxsize=None)
def load_prompt(name: str, language: str) -> str:
    """The text of `<name>_<language>.md` (English when that language has none)."""
    path = PROMPTS_DIR / f"{name}_{language}.md"
    if not path.is_file():
        path = PROMPTS_DIR / f"{name}_en.md"
    return path.read_text(encoding="utf-8")


def render(template: str, values: dict[str, str], sections: dict[str, bool] | None = None) -> str:
    """Keeps `{{#name}}…{{/name}}` sections whose flag is true, then fills `{{placeholders}}`."""
    flags = sections or {}
    text = _SECTION.sub(lambda m: m.group(2) if flags.get(m.group(1)) else "", template)
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def fence(text: str) -> str:
    """Text that cannot close the tag it is fenced in (`</cortex_…` loses its slash's meaning)."""
    return _FENCE_CLOSE.sub(lambda m: "<\\/" + m.group(1), text)


def user_name_for(persona: dict, app_settings: dict, language: str) -> str:
    """The person's name: the persona's setting, then the app's, then a neutral default."""
    return (persona.get("user_name") or app_settings.get("user_name")
            or _DEFAULT_USER[language]).strip()


def system_blocks(persona: dict, user_name: str, cortex: dict[str, str] | None,
                  language: str, now: datetime) -> list[SystemBlock]:
    """The cached persona+cortex prefix, then the current time; `cortex=None` injects nothing.

    Character-card fields are resolved (`{{char}}`, `{{user}}`) and placed in their own
    sections; `creator_notes` is for people only and never enters a prompt.
    """
    card = _card_values(persona, user_name, language)
    values = {"char_name": persona["name"], "user_name": user_name, **card}
    if cortex is not None:
        for key in CORTEX_KEYS:
            values[key] = fence((cortex.get(key) or "").strip()) or _EMPTY[language]
    sections = {key: bool(card[key]) for key in _CARD_SECTIONS}
    stable = render(load_prompt("chat_system", language), values,
                    {"cortex": cortex is not None, **sections})
    stable = re.sub(r"\n{3,}", "\n\n", stable).strip()
    moment = render(load_prompt("chat_time", language), {"now": format_time(now, language)})
    return [SystemBlock(stable, cache=True), SystemBlock(moment.strip())]


_CARD_SECTIONS = ("greeting", "personality", "scenario", "example_dialogue")


def _card_values(persona: dict, user_name: str, language: str) -> dict[str, str]:
    """The persona's card text for the system prompt, placeholders resolved."""
    char = card_macros.char_name(persona)

    def text(field: str) -> str:
        return card_macros.resolve((persona.get(field) or "").strip(), char, user_name)
    intro = render(load_prompt("chat_intro", language), {"char_name": persona["name"],
                                                         "user_name": user_name}).strip()
    system = text("system_prompt") if persona.get("use_card_prompts", True) else ""
    return {"intro": system.replace("{{original}}", intro) if system else intro,
            "char_description": text("description"), "personality": text("personality"),
            "scenario": text("scenario"), "greeting": fence(text("greeting")),
            "example_dialogue": fence(text("example_dialogue"))}


def post_history_instructions(persona: dict, user_name: str) -> str:
    """The card's instructions for after the conversation, or '' (switched off or none)."""
    if not persona.get("use_card_prompts", True):
        return ""
    char = card_macros.char_name(persona)
    return card_macros.resolve((persona.get("post_history_instructions") or "").strip(), char,
                               user_name)


def with_post_history(history: list[dict], instructions: str) -> list[dict]:
    """`history` with the card's post-history instructions as a second text block of the last
    user turn (after the conversation, where cards expect them); unchanged when there are none."""
    if not instructions or not history or history[-1]["role"] != "user":
        return history
    last = history[-1]
    blocks = [{"type": "text", "text": last["content"]},
              {"type": "text", "text": f"<post_history_instructions>\n{fence(instructions)}\n"
                                       "</post_history_instructions>"}]
    return [*history[:-1], {"role": "user", "content": blocks}]


def format_time(now: datetime, language: str) -> str:
    """An absolute, unambiguous local time such as `Tuesday, 2025-06-03 14:05 (UTC+02:00)`."""
    weekday = _WEEKDAYS_DE[now.weekday()] if language == "de" else now.strftime("%A")
    offset = now.strftime("%z")
    zone = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    return f"{weekday}, {now:%Y-%m-%d %H:%M} ({zone})"


def title_prompt(persona: dict, user_name: str, user_text: str, reply_text: str,
                 language: str) -> str:
    """The instruction asking for a short session title from the first exchange."""
    values = {"char_name": persona["name"], "user_name": user_name,
              "user_message": fence(user_text[:2000]), "assistant_message": fence(reply_text[:2000])}
    return render(load_prompt("chat_title", language), values).strip()
