"""The interface's strings: one flat JSON catalogue per language in `src/instructions/ui/`.

Keys are dotted and grouped by page or module (`chat.composer.send`); values may hold `{name}`
placeholders. A key ending in `.one` / `.other` (etc., the CLDR plural categories) is one form of
a plural; `plural()` picks the form. The server renders templates with `translate`; the browser
gets the same catalogue embedded in each page as JSON text in an inert `<template>`
(`lib/i18n.js`). Like `prompts`, this module
imports nothing of ours, so every layer may use it.
"""
import json
import re
from functools import cache
from pathlib import Path

UI_DIR = Path(__file__).resolve().parents[1] / "instructions" / "ui"
LANGUAGES = ("en", "de")
DEFAULT = "en"
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@cache
def catalogue(language: str) -> dict[str, str]:
    """The strings of `language` (English for an unknown one); read once per process."""
    name = language if language in LANGUAGES else DEFAULT
    with open(UI_DIR / f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)


def translate(language: str, key: str, **params: object) -> str:
    """The string for `key` with `{placeholders}` filled in; a missing key shows as itself."""
    text = catalogue(language).get(key)
    if text is None:
        return key
    return _PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)


def plural(language: str, key: str, count: int, **params: object) -> str:
    """The plural form of `key` for `count` (`key.one` for 1 in English and German)."""
    form = "one" if count == 1 and f"{key}.one" in catalogue(language) else "other"
    return translate(language, f"{key}.{form}", count=count, **params)


def choose(chosen: str | None, accept_language: str | None) -> str:
    """The interface language: the person's setting, else the browser's best supported one."""
    if chosen in LANGUAGES:
        return chosen
    best, best_q = DEFAULT, 0.0
    for position, part in enumerate((accept_language or "")[:1000].split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        base = tag.strip().lower()[:2]
        quality = _quality(params) - position * 1e-6
        if base in LANGUAGES and quality > best_q:
            best, best_q = base, quality
    return best


def _quality(params: str) -> float:
    """The `q=` weight of one Accept-Language entry (1 when absent, 0 when malformed)."""
    params = params.strip()
    if not params:
        return 1.0
    name, _, value = params.partition("=")
    try:
        return max(0.0, min(1.0, float(value))) if name.strip() == "q" else 0.0
    except ValueError:
        return 0.0
