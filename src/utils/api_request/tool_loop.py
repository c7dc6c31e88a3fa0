"""The non-streaming tool_use loop: request, run the turn's tools, answer them, repeat.

The history we send is always one the Messages API accepts: the assistant turn keeps its
`tool_use` blocks and the next user turn answers every one of them, in order, with a matching
`tool_result`. A response cut off by `max_tokens` inside a tool call is never executed and never
added to the history: the turn is asked again once with a larger budget.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from .anthropic import (add_usage, assistant_message, message_dict, text_of, tool_calls,
                        tool_name, tool_results_message, usage_dict)
from .errors import ApiFailure, failure, from_exception
from .handler import ToolHandler, run_guarded
from .request_builder import build_kwargs
from .types import ApiResponse, RequestConfig, ToolCall, ToolExecutor, ToolResult

log = logging.getLogger(__name__)

MAX_TOKENS_CAP = 16384


class _Truncated(Exception):
    """A turn ended inside a tool call even with the larger budget."""


class ToolLoop:
    """One `tool_request` run: its history, usage, tool log and token budget."""

    def __init__(self, create: Callable[..., Any], config: RequestConfig, model: str,
                 executor: ToolExecutor | ToolHandler, secret: str | None):
        self.create = create
        self.config = config
        self.executor = executor
        self.secret = secret
        self.tools = config.tools or (executor.definitions if isinstance(executor, ToolHandler) else None)
        self.known = {tool_name(tool) for tool in self.tools or ()}
        self.kwargs = build_kwargs(config, model, self.tools) if self.tools else {}
        self.max_tokens = config.max_tokens
        self.usage: dict[str, int] = {}
        self.log: list[dict] = []

    def run(self) -> ApiResponse:
        """Loops until the model stops calling tools or `max_tool_rounds` is reached."""
        if not self.tools:
            return self._fail(failure("invalid_request", "tool_request() needs config.tools"))
        if self.config.prefill:
            return self._fail(failure("invalid_request", "a prefill cannot be combined with tools"))
        if self.config.max_tool_rounds < 1:
            return self._fail(failure("invalid_request", "max_tool_rounds must be at least 1"))
        response = None
        try:
            for round_num in range(1, self.config.max_tool_rounds + 1):
                log.info("tool round %d/%d for %s", round_num, self.config.max_tool_rounds,
                         self.config.request_type)
                response = self._turn()
                calls = tool_calls(response.content)
                if response.stop_reason != "tool_use" or not calls:
                    return self._finish(response, response.stop_reason)
                results = self._execute(calls)
                self._record(round_num, calls, results)
                self.kwargs["messages"] += [assistant_message(response.content),
                                            tool_results_message(results)]
                if self._must_stop(results):
                    failed = ", ".join(r.name for r in results if r.is_error)
                    return self._fail(failure("tool_execution_failed", failed))
        except _Truncated:
            return self._fail(failure("truncated_tool_call"))
        except Exception as exc:
            return self._fail(from_exception(exc, self.secret))
        log.warning("tool_request for %s stopped after %d rounds", self.config.request_type,
                    self.config.max_tool_rounds)
        return self._finish(response, "max_tool_rounds")

    def _turn(self) -> Any:
        """One model turn; retried once with a doubled budget if cut off inside a tool call."""
        response = self._call()
        if not _cut_in_tool_call(response):
            return response
        if self.max_tokens >= MAX_TOKENS_CAP:
            raise _Truncated()
        self.max_tokens = min(self.max_tokens * 2, MAX_TOKENS_CAP)
        log.warning("a tool call was cut off by max_tokens; asking again with max_tokens=%d",
                    self.max_tokens)
        response = self._call()
        if _cut_in_tool_call(response):
            raise _Truncated()
        return response

    def _call(self) -> Any:
        response = self.create(**{**self.kwargs, "max_tokens": self.max_tokens})
        self.usage = add_usage(self.usage, usage_dict(response.usage))
        return response

    def _execute(self, calls: list[ToolCall]) -> list[ToolResult]:
        if isinstance(self.executor, ToolHandler):
            return self.executor.execute_batch(calls)
        return [self._run_plain(call) for call in calls]

    def _run_plain(self, call: ToolCall) -> ToolResult:
        if call.name not in self.known:
            log.warning("the model called an unknown tool %r", call.name)
            return ToolResult.error(call.id, call.name, f"Unknown tool: {call.name}")
        return run_guarded(call, lambda: self.executor(call.name, call.arguments))

    def _record(self, round_num: int, calls: list[ToolCall], results: list[ToolResult]) -> None:
        for call, result in zip(calls, results):
            log.info("tool %s [%s] -> success=%s", call.name, call.id, not result.is_error)
            self.log.append({"round": round_num, "tool_name": call.name, "tool_input": call.arguments,
                             "tool_use_id": call.id, "success": not result.is_error,
                             "result": result.content})

    def _must_stop(self, results: list[ToolResult]) -> bool:
        handler = self.executor if isinstance(self.executor, ToolHandler) else None
        return handler is not None and not handler.continue_on_error and any(r.is_error for r in results)

    def _finish(self, response: Any, stop_reason: str | None) -> ApiResponse:
        return ApiResponse(success=True, content=text_of(response.content), usage=self.usage,
                           raw_response=message_dict(response), stop_reason=stop_reason,
                           tool_results=self.log or None)

    def _fail(self, problem: ApiFailure) -> ApiResponse:
        return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                           retryable=problem.retryable, usage=self.usage or None,
                           tool_results=self.log or None)


def _cut_in_tool_call(response: Any) -> bool:
    return response.stop_reason == "max_tokens" and bool(tool_calls(response.content))
