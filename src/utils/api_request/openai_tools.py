"""The non-streaming tool loop over Chat Completions `tools` / `tool_calls`, with two fallbacks.

History stays valid for strict servers: the assistant turn keeps its `tool_calls`, then one
`role: tool` message per `tool_call_id`, in call order. A turn cut off by `finish_reason: length`
with calls in it is never executed: asked again once with a doubled budget, then refused. A call
written as JSON text in `content` is recovered when it names one of our tools. An endpoint that
refuses tools (a 4xx naming tools) gets one structured "edit plan" request instead, whose calls
run through the same executor, so every check and revision is the same; if that fails too, the
run ends with `tools_unsupported`.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

from .anthropic import add_usage, tool_name
from .errors import ApiFailure
from .handler import ToolHandler, run_guarded
from .openai import (assistant_message, build_kwargs, parse_tool_calls, stop_reason,
                     tool_param, tool_result_messages, usage_dict)
from .openai_errors import failure, from_exception, refuses_tools
from .text_calls import UnknownToolText, calls_from_text, plan_summary
from .types import ApiResponse, RequestConfig, SystemBlock, ToolCall, ToolExecutor, ToolResult

log = logging.getLogger(__name__)

MAX_TOKENS_CAP = 16384
PLAN_INSTRUCTIONS = (
    "\n\nThis endpoint cannot call tools. Instead answer with exactly one JSON object and "
    "nothing else: {\"calls\": [{\"name\": <tool name>, \"arguments\": {...}}, ...], "
    "\"summary\": <one sentence>}. The calls run in order, as if you had called the tools. "
    "Use an empty list if nothing needs to change. The tools:\n")


class _Stop(Exception):
    def __init__(self, problem: ApiFailure):
        super().__init__(problem.code)
        self.problem = problem


class OpenAIToolLoop:
    """One `tool_request` run on a Chat Completions endpoint."""

    def __init__(self, create: Callable[..., dict], config: RequestConfig, model: str,
                 executor: ToolExecutor | ToolHandler, secret: str | None, tokens_field: str):
        self.create, self.config, self.executor, self.secret = create, config, executor, secret
        self.tools = config.tools or (executor.definitions if isinstance(executor, ToolHandler)
                                      else None)
        self.known = {tool_name(tool) for tool in self.tools or ()}
        self.tokens_field = tokens_field
        self.kwargs = build_kwargs(config, model, completion_tokens_field=tokens_field,
                                   tools=self.tools) if self.tools else {}
        self.max_tokens = config.max_tokens
        self.usage: dict[str, int] = {}
        self.log: list[dict] = []

    def run(self) -> ApiResponse:
        """Loops until the model stops calling tools or `max_tool_rounds` is reached."""
        if not self.tools:
            return self._fail(failure("invalid_request", "tool_request() needs config.tools"))
        if self.config.max_tool_rounds < 1:
            return self._fail(failure("invalid_request", "max_tool_rounds must be at least 1"))
        try:
            return self._rounds()
        except _Stop as stop:
            return self._fail(stop.problem)
        except Exception as exc:
            problem = from_exception(exc, self.secret)
            if not self.log and refuses_tools(problem):
                log.warning("the endpoint refused tools; asking for a JSON edit plan instead")
                return self._plan()
            return self._fail(problem)

    def _rounds(self) -> ApiResponse:
        message, finish = {}, None
        for round_num in range(1, self.config.max_tool_rounds + 1):
            message, finish = self._turn()
            calls = self._calls(message, finish)
            if not calls:
                return self._finish(message.get("content"), finish)
            results = self._execute(calls)
            self._record(round_num, calls, results)
            self.kwargs["messages"] += [assistant_message(message.get("content") or "", calls),
                                        *tool_result_messages(results)]
            if self._must_stop(results):
                failed = ", ".join(r.name for r in results if r.is_error)
                raise _Stop(failure("tool_execution_failed", failed))
        return self._finish(message.get("content"), "max_tool_rounds")

    def _turn(self) -> tuple[dict, str | None]:
        """One model turn; asked again once with a doubled budget if cut inside a tool call."""
        message, finish = self._call(self.kwargs)
        if not (finish == "length" and self._has_call(message)):
            return message, finish
        if self.max_tokens >= MAX_TOKENS_CAP:
            raise _Stop(failure("truncated_tool_call"))
        self.max_tokens = min(self.max_tokens * 2, MAX_TOKENS_CAP)
        log.warning("a tool call was cut off by the length limit; asking again with %d tokens",
                    self.max_tokens)
        message, finish = self._call(self.kwargs)
        if finish == "length" and self._has_call(message):
            raise _Stop(failure("truncated_tool_call"))
        return message, finish

    def _has_call(self, message: dict) -> bool:
        if message.get("tool_calls"):
            return True
        try:
            return bool(calls_from_text(message.get("content"), self.known))
        except UnknownToolText:
            return True

    def _call(self, kwargs: dict) -> tuple[dict, str | None]:
        response = self.create(**{**kwargs, self.tokens_field: self.max_tokens})
        self.usage = add_usage(self.usage, usage_dict(response.get("usage")))
        choice = (response.get("choices") or [{}])[0] or {}
        return choice.get("message") or {}, choice.get("finish_reason")

    def _calls(self, message: dict, finish: str | None) -> list[ToolCall]:
        calls = parse_tool_calls(message)
        if calls:
            return calls
        try:
            recovered = calls_from_text(message.get("content"), self.known)
        except UnknownToolText as exc:
            raise _Stop(failure("tools_unsupported", str(exc))) from exc
        if recovered:
            log.info("recovered %d tool call(s) written as text", len(recovered))
            message["content"] = None
        return recovered or []

    def _plan(self) -> ApiResponse:
        """The fallback: one JSON edit plan, its calls run through the same executor."""
        described = json.dumps([tool_param(tool)["function"] for tool in self.tools],
                               ensure_ascii=False)
        system = self.config.system_prompt
        blocks = system if isinstance(system, list) else [SystemBlock(system)]
        config = RequestConfig(system_prompt=[*blocks, SystemBlock(PLAN_INSTRUCTIONS + described)],
                               messages=self.config.messages, max_tokens=self.config.max_tokens)
        kwargs = build_kwargs(config, self.kwargs["model"], completion_tokens_field=self.tokens_field)
        try:
            message, finish = self._call({**kwargs, "response_format": {"type": "json_object"}})
        except Exception as exc:
            if from_exception(exc, self.secret).code != "invalid_request":
                return self._fail(from_exception(exc, self.secret))
            try:
                message, finish = self._call(kwargs)
            except Exception as again:
                return self._fail(from_exception(again, self.secret))
        return self._apply_plan(message.get("content"), finish)

    def _apply_plan(self, text: str | None, finish: str | None) -> ApiResponse:
        try:
            calls = calls_from_text(text, self.known)
        except UnknownToolText as exc:
            return self._fail(failure("tools_unsupported", str(exc)))
        if finish == "length" or (calls is None and not _empty_plan(text)):
            return self._fail(failure("tools_unsupported", "the edit plan was not usable JSON"))
        results = self._execute(calls or [])
        self._record(1, calls or [], results)
        if self._must_stop(results):
            failed = ", ".join(r.name for r in results if r.is_error)
            return self._fail(failure("tool_execution_failed", failed))
        return self._finish(plan_summary(text), finish, mode="edit_plan")

    def _execute(self, calls: list[ToolCall]) -> list[ToolResult]:
        if isinstance(self.executor, ToolHandler):
            return self.executor.execute_batch(calls)
        return [self._run_plain(call) for call in calls]

    def _run_plain(self, call: ToolCall) -> ToolResult:
        if call.name not in self.known:
            return ToolResult.error(call.id, call.name, f"Unknown tool: {call.name}")
        return run_guarded(call, lambda: self.executor(call.name, call.arguments))

    def _record(self, round_num: int, calls: list[ToolCall], results: list[ToolResult]) -> None:
        for call, result in zip(calls, results):
            self.log.append({"round": round_num, "tool_name": call.name, "tool_input": call.arguments,
                             "tool_use_id": call.id, "success": not result.is_error,
                             "result": result.content})

    def _must_stop(self, results: list[ToolResult]) -> bool:
        handler = self.executor if isinstance(self.executor, ToolHandler) else None
        return handler is not None and not handler.continue_on_error and any(r.is_error for r in results)

    def _finish(self, text: Any, finish: str | None, mode: str = "tools") -> ApiResponse:
        reason = finish if finish == "max_tool_rounds" else stop_reason(finish)
        return ApiResponse(success=True, content=(text or "").strip() if isinstance(text, str) else "",
                           usage=self.usage, stop_reason=reason, tool_results=self.log or None,
                           raw_response={"provider": "openai_compatible", "mode": mode})

    def _fail(self, problem: ApiFailure) -> ApiResponse:
        return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                           retryable=problem.retryable, usage=self.usage or None,
                           tool_results=self.log or None)


def _empty_plan(text: str | None) -> bool:
    try:
        data = json.loads((text or "").strip())
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("calls") == []
