"""Character-card placeholders, resolved the way other card apps do (SPEC_V3 "CBS").

`{{char}}`, `<char>` and `<bot>` become the card's nickname (else the persona's name);
`{{user}}` and `<user>` the person's name; `{{// …}}` and `{{comment: …}}` are dropped from
prompts. Matching is case-insensitive. Text is stored with its placeholders, so an export gives
the card back as it came.
"""
import re

from ..models.personas import Persona

_CHAR = re.compile(r"\{\{char\}\}|<char>|<bot>", re.IGNORECASE)
_USER = re.compile(r"\{\{user\}\}|<user>", re.IGNORECASE)
_ANY = re.compile(f"{_CHAR.pattern}|(?P<user>{_USER.pattern})", re.IGNORECASE)
_COMMENT = re.compile(r"\{\{(//|comment:)[^{}]*\}\}", re.IGNORECASE)


def char_name(persona: Persona) -> str:
    """What `{{char}}` stands for: the card's nickname, else the persona's name."""
    nickname = persona.card.get("nickname")
    return nickname.strip() if isinstance(nickname, str) and nickname.strip() else persona.name


def resolve(text: str, char: str, user: str) -> str:
    """`text` with the placeholders filled in (one pass: a name is never itself expanded)."""
    if "{" not in text and "<" not in text:
        return text
    text = _COMMENT.sub("", text)
    return _ANY.sub(lambda m: user if m.group("user") else char, text)
