"""Prompt texts shared by the conversation layer (`services/`) and the memory layer (`cortex/`).

The texts live in `src/instructions/prompts/`. Placeholders are filled in one pass, so text inside
a value (a cortex file, a persona description) is never itself treated as a placeholder; data is
fenced so it cannot close the tag it sits in. This module imports nothing of ours, so every layer
may use it.
"""
import re
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Protocol

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "instructions" / "prompts"
LANGUAGES = ("en", "de")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_SECTION = re.compile(r"\{\{#([a-z_]+)\}\}\n?(.*?)\{\{/\1\}\}\n?", re.DOTALL)
_FENCE_CLOSE = re.compile(r"</(cortex_[a-z]+|conversation|greeting|example_dialogue|"
                          r"post_history_instructions|world_info|user_persona)", re.IGNORECASE)
_DEFAULT_USER = {"en": "the user", "de": "dein Gegenüber"}
CARD_USER = "User"
_WEEKDAYS_DE = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")


class HasUserName(Protocol):
    """What these helpers read of a persona (`models.personas.Persona`, named structurally:
    this module imports nothing of ours): its "Your name in this chat"."""

    @property
    def user_name(self) -> str: ...


class ChosenPerson(Protocol):
    """What these helpers read of a user persona (`models.user_personas.UserPersona`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def is_default(self) -> bool: ...


def language_of(*candidates: str | None) -> str:
    """The first supported language among `candidates`, else English."""
    return next((c for c in candidates if c in LANGUAGES), "en")


@cache
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


def user_name_for(persona: HasUserName, app_user_name: str | None, language: str) -> str:
    """The person's name: the persona's setting, then the app's (the settings' `user_name`),
    then a neutral default."""
    return _set_name(persona, app_user_name) or _DEFAULT_USER[language]


def card_user_name(persona: HasUserName, app_user_name: str | None) -> str:
    """What `{{user}}` stands for in card text: the person's name, else "User", the name other
    card apps give a nameless person. Card text puts `{{user}}` where a name goes ("Ahoy,
    {{user}}!", "{{user}}'s map"), so the prose default "the user" would read "Ahoy, the user!";
    the browser shows the same fallback (`lib/persona_view.js`)."""
    return _set_name(persona, app_user_name) or CARD_USER


def _set_name(persona: HasUserName, app_user_name: str | None) -> str:
    names = (persona.user_name, app_user_name)
    return next((name.strip() for name in names if name and name.strip()), "")


def user_for(persona: HasUserName, app_user_name: str | None, language: str,
             user_persona: ChosenPerson | None) -> tuple[str, str]:
    """`(name, description)` of the person in a conversation (docs/about-you.md).

    `user_persona` is the one the session uses (its choice, else the default; None: none). A
    chosen user persona other than the default names the person; with the default (or none)
    the persona's own "Your name in this chat" still wins, then the default's name (which the
    settings' `user_name` reads), then a neutral word, exactly as before user personas.
    """
    if user_persona is not None and not user_persona.is_default:
        name = user_persona.name.strip() or _DEFAULT_USER[language]
    else:
        name = user_name_for(persona, app_user_name, language)
    return name, (user_persona.description.strip() if user_persona is not None else "")


def card_user_for(persona: HasUserName, app_user_name: str | None,
                  user_persona: ChosenPerson | None) -> str:
    """What `{{user}}` stands for in card text in a conversation: a chosen user persona other
    than the default names the person (as in `user_for`), else `card_user_name`."""
    name = user_persona.name.strip() if user_persona is not None else ""
    if name and user_persona is not None and not user_persona.is_default:
        return name
    return card_user_name(persona, app_user_name)


def weekday(now: datetime, language: str) -> str:
    """The weekday's name in `language` (German names for `de`, English otherwise)."""
    return _WEEKDAYS_DE[now.weekday()] if language == "de" else now.strftime("%A")
