"""Chat prompts from the texts in `src/instructions/prompts/` (helpers in `utils/prompts.py`).

The system prompt is two blocks: a stable prefix (persona and cortex) marked for prompt caching,
then the current time, which changes every turn and so must come after the cache breakpoint.
The shared helpers are re-exported so chat code keeps one name for its prompt vocabulary.
"""
import re
from datetime import datetime

from ..api_request.types import SystemBlock
from ..prompts import fence, language_of, load_prompt, render, user_name_for, weekday

__all__ = ["CORTEX_KEYS", "fence", "format_time", "language_of", "load_prompt", "render",
           "system_blocks", "title_prompt", "user_name_for"]
CORTEX_KEYS = ("cortex_memory", "cortex_soul", "cortex_relationship")
_EMPTY = {"en": "(empty)", "de": "(leer)"}


def system_blocks(persona: dict, user_name: str, cortex: dict[str, str] | None,
                  language: str, now: datetime) -> list[SystemBlock]:
    """The cached persona+cortex prefix, then the current time; `cortex=None` injects nothing."""
    values = {
        "char_name": persona["name"],
        "char_description": persona.get("description") or "",
        "user_name": user_name,
    }
    greeting = (persona.get("greeting") or "").strip()
    values["greeting"] = fence(greeting)
    if cortex is not None:
        for key in CORTEX_KEYS:
            values[key] = fence((cortex.get(key) or "").strip()) or _EMPTY[language]
    stable = render(load_prompt("chat_system", language), values,
                    {"cortex": cortex is not None, "greeting": bool(greeting)})
    stable = re.sub(r"\n{3,}", "\n\n", stable).strip()
    moment = render(load_prompt("chat_time", language), {"now": format_time(now, language)})
    return [SystemBlock(stable, cache=True), SystemBlock(moment.strip())]


def format_time(now: datetime, language: str) -> str:
    """An absolute, unambiguous local time such as `Tuesday, 2025-06-03 14:05 (UTC+02:00)`."""
    offset = now.strftime("%z")
    zone = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    return f"{weekday(now, language)}, {now:%Y-%m-%d %H:%M} ({zone})"


def title_prompt(persona: dict, user_name: str, user_text: str, reply_text: str,
                 language: str) -> str:
    """The instruction asking for a short session title from the first exchange."""
    values = {"char_name": persona["name"], "user_name": user_name,
              "user_message": fence(user_text[:2000]), "assistant_message": fence(reply_text[:2000])}
    return render(load_prompt("chat_title", language), values).strip()
