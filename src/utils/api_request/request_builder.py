"""Builds the keyword arguments of `messages.create` from a RequestConfig."""
from __future__ import annotations

from collections.abc import Iterable

from .anthropic import system_param, tool_choice_param, tool_params
from .types import RequestConfig, ToolDefinition


def build_messages(config: RequestConfig) -> list[dict]:
    """A fresh copy of the history, with the prefill as the last assistant turn if one is set.

    The API rejects a final assistant turn that ends in whitespace, so the prefill is stripped
    on the right.
    """
    messages = [dict(message) for message in config.messages]
    if config.prefill and config.prefill.rstrip():
        messages.append({"role": "assistant", "content": config.prefill.rstrip()})
    return messages


def build_kwargs(config: RequestConfig, model: str,
                 tools: Iterable[ToolDefinition | dict] | None = None) -> dict:
    """Everything `messages.create` needs except `stream`; optional fields only when set."""
    kwargs: dict = {"model": model, "max_tokens": config.max_tokens,
                    "messages": build_messages(config)}
    system = system_param(config.system_prompt, config.cache_system)
    if system is not None:
        kwargs["system"] = system
    tools = list(tools) if tools is not None else config.tools
    if tools:
        kwargs["tools"] = tool_params(tools)
        choice = tool_choice_param(config.tool_choice, config.disable_parallel_tool_use)
        if choice is not None:
            kwargs["tool_choice"] = choice
    if config.effort:
        kwargs["output_config"] = {"effort": config.effort}
    if config.temperature is not None:
        kwargs["extra_body"] = {"temperature": config.temperature}
    return kwargs
