"""Fitting a request into the context window of the endpoint it goes to.

The `Connection` (types.py) is read before every request (provider, base URL, key, window all
live in shared settings, so every worker process agrees). The fit is a documented estimate
(docs/models.md): UTF-8 bytes / 3, rounded up, plus 4 tokens per message; with tools, their
JSON counts too. It errs on the large side for English (real tokenizers average about 4 bytes a
token), so a request that fits the estimate fits the server. History is trimmed from the oldest
turn; the system prompt (persona and cortex) is never cut: when it does not fit with the newest message and the
answer's budget, the request fails with `context_too_small`, naming the numbers.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math

from .errors import ApiFailure
from .openai import content_text, system_text
from .types import DEFAULT_WINDOWS, RequestConfig, SystemBlock, ToolDefinition

log = logging.getLogger(__name__)

PER_MESSAGE = 4
PROVIDERS = tuple(DEFAULT_WINDOWS)


def estimate(text: str) -> int:
    """Tokens for `text` by the documented estimate (bytes / 3, rounded up)."""
    return math.ceil(len(text.encode("utf-8", "replace")) / 3)


def message_tokens(message: dict) -> int:
    """One history message with its overhead."""
    content = message.get("content")
    text = content_text(content) if not isinstance(content, str) else content
    extra = json.dumps(message.get("tool_calls")) if message.get("tool_calls") else ""
    return estimate(text or "") + estimate(extra) + PER_MESSAGE


def fit(config: RequestConfig, window: int) -> RequestConfig | ApiFailure:
    """`config` with the oldest history dropped until it fits, or the failure saying why not."""
    fixed = PER_MESSAGE + config.max_tokens
    if config.tools:
        fixed += estimate(json.dumps([_tool_json(tool) for tool in config.tools]))
    if fixed + _most_system(config.system_prompt) + _most(config.messages) <= window and \
            (not config.messages or config.messages[0].get("role") == "user"):
        return config  # fits even if every character took 4 bytes: nothing to count or cut
    fixed += estimate(system_text(config.system_prompt))
    costs = [message_tokens(message) for message in config.messages]
    newest = costs[-1] if costs else 0
    if fixed + newest > window:
        return too_small(fixed - config.max_tokens + newest, config.max_tokens, window)
    total, start = fixed + sum(costs), 0
    while total > window and start < len(costs) - 1:
        total -= costs[start]
        start += 1
    while start < len(costs) - 1 and config.messages[start].get("role") != "user":
        start += 1  # a history starts with the person's turn
    if start == 0:
        return config
    log.info("trimmed %d old message(s) of %s to fit a %d-token window", start,
             config.request_type, window)
    return dataclasses.replace(config, messages=list(config.messages[start:]))


def _most_system(system: str | list[SystemBlock]) -> int:
    """An upper bound of the system prompt's estimate without joining or encoding it (a text
    with one character beyond Latin-1 is encoded character by character: about 1 ns each);
    each block counts 2 characters more for the blank line that joins it to the next."""
    chars = len(system) if isinstance(system, str) else sum(len(block.text) + 2
                                                            for block in system)
    return math.ceil(chars * 4 / 3)


def _most(messages: list[dict]) -> int:
    """An upper bound of the history's estimate without encoding it (UTF-8 takes at most 4
    bytes a character); a message with blocks or tool calls counts as too large to bound."""
    chars = 0
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str) or message.get("tool_calls"):
            return 2**62
        chars += len(content)
    return math.ceil(chars * 4 / 3) + len(messages) * (PER_MESSAGE + 1)


def too_small(prompt: int, answer: int, window: int) -> ApiFailure:
    """The `context_too_small` failure, with the numbers."""
    return ApiFailure("context_too_small",
                      f"The persona, its memory and the newest message need about {prompt} "
                      f"tokens plus {answer} for the answer, but the context window is {window} "
                      "tokens. Raise the context window in Settings (and on the server, e.g. "
                      "Ollama's num_ctx) or lower max_tokens; memory is never cut to fit.", False)


def _tool_json(tool: ToolDefinition | dict) -> dict:
    if isinstance(tool, dict):
        return tool
    return {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
