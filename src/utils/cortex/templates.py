"""The starting text of each cortex file, in the language chosen in settings.

The shipped Markdown lives in `src/instructions/cortex/<language>/<file>`; `{{user}}` becomes the
user name from settings, or a neutral word when none is set. German needs a word that reads
right in nominative, accusative and dative alike ("über {{user}}", "zu {{user}}"), so it uses the
name-like "User" (the seed's own default user name) rather than a noun that would need declining.
"""
from functools import cache
from pathlib import Path

from ..models.settings import MemoryRunSettings
from ..prompts import LANGUAGES

DEFAULT_LANGUAGE = "en"
NEUTRAL_USER = {"en": "my conversation partner", "de": "User"}
TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "instructions" / "cortex"


def language_of(settings: MemoryRunSettings | None) -> str:
    """The template language ("en" unless German is chosen)."""
    value = settings.language if settings else None
    return value if value in LANGUAGES else DEFAULT_LANGUAGE


def render_template(filename: str, settings: MemoryRunSettings | None = None) -> str:
    """The template for `filename` (a validated cortex filename) with `{{user}}` filled in."""
    language = language_of(settings)
    user_name = (settings.user_name or "").strip() if settings else ""
    return _raw(language, filename).replace("{{user}}", user_name or NEUTRAL_USER[language])


@cache
def _raw(language: str, filename: str) -> str:
    return (TEMPLATE_DIR / language / filename).read_text(encoding="utf-8")
