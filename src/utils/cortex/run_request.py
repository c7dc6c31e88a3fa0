"""The request of a cortex edit run other than the regular update (reconciliation,
consolidation): one prompt file split at the user marker, rendered with the run's values, the
user part cached, and the edit tools; and the pieces every run's prompt shares (the preloaded
files with their meters, the day)."""
from datetime import datetime

from .. import prompts
from ..api_request.types import RequestConfig
from ..models.cortex import CortexFile
from . import pins
from .staging import split_lines
from .tools import tool_definitions

USER_MARKER = "<!-- user message -->"


def edit_run_request(prompt_name: str, language: str, values: dict[str, str], *, model: str,
                     max_tokens: int) -> RequestConfig:
    """The RequestConfig of one run of `prompt_name` (also its `request_type`)."""
    system, user = prompts.load_prompt(prompt_name, language).split(USER_MARKER, 1)
    prompt = {"type": "text", "text": prompts.render(user, values).strip(),
              "cache_control": {"type": "ephemeral"}}
    return RequestConfig(system_prompt=prompts.render(system, values).strip(),
                         messages=[{"role": "user", "content": [prompt]}], model=model,
                         max_tokens=max_tokens, tools=tool_definitions(),
                         request_type=prompt_name)


def render_file(file: CortexFile) -> str:
    """One preloaded file with its meter, fenced as data."""
    budget = file.budget
    over = ' over_budget="yes"' if file.chars > budget else ""
    body = prompts.fence(file.content)
    pinned = pins.mark_for_model(file.content)
    if body and not body.endswith("\n"):
        body += "\n"
    return (f'<cortex_file name="{file.filename}" chars="{file.chars} / {budget}" '
            f'lines="{len(split_lines(file.content))}"{over}{pinned}>\n{body}</cortex_file>')


def format_day(now: datetime, language: str) -> str:
    """`Tuesday, 2025-06-03` (German weekday names for `de`)."""
    return f"{prompts.weekday(now, language)}, {now:%Y-%m-%d}"
