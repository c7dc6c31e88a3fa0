"""The request of a cortex edit run other than the regular update (reconciliation,
consolidation): one prompt file split at the user marker, rendered with the run's values, the
user part cached, and the edit tools."""
from .. import prompts
from ..api_request.types import RequestConfig
from .tools import tool_definitions

USER_MARKER = "<!-- user message -->"


def edit_run_request(prompt_name: str, language: str, values: dict, *, model: str,
                     max_tokens: int) -> RequestConfig:
    """The RequestConfig of one run of `prompt_name` (also its `request_type`)."""
    system, user = prompts.load_prompt(prompt_name, language).split(USER_MARKER, 1)
    prompt = {"type": "text", "text": prompts.render(user, values).strip(),
              "cache_control": {"type": "ephemeral"}}
    return RequestConfig(system_prompt=prompts.render(system, values).strip(),
                         messages=[{"role": "user", "content": [prompt]}], model=model,
                         max_tokens=max_tokens, tools=tool_definitions(),
                         request_type=prompt_name)
