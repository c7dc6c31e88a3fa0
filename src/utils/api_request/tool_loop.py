"""The one non-streaming tool loop, for every provider: request, run the turn's tools, answer them.

The history we send is always one the provider accepts: the adapter appends the assistant turn
with its calls and one answer per call, in call order. Decided here, once for all providers:
- A turn stopped by `max_tokens` with calls in it is never executed, not even its earlier,
  complete calls (the turn is incomplete): it is asked again once with twice the budget (up to
  `MAX_TOKENS_CAP`), else the run fails with `truncated_tool_call`.
- Calls run only when the turn stopped for them (`tool_use`); tool_use blocks of a turn that
  ended otherwise are not run (seed 000).
- A plain executor (seed 000's `(name, input) -> (ok, text)`) gets every call the model makes
  and decides itself which tools exist; a `ToolHandler` answers names it does not know.
- A prefill cannot be combined with tools, and `max_tool_rounds` must be at least 1.
"""
from __future__ import annotations

import logging

from .adapter import ProviderAdapter, Refused, Round, Usage, tool_name
from .errors import ApiFailure
from .handler import ToolHandler, run_guarded
from .types import ApiResponse, RequestConfig, ToolCall, ToolExecutor, ToolResult

log = logging.getLogger(__name__)

MAX_TOKENS_CAP = 16384


class ToolLoop:
    """One `tool_request` run: its history, usage, tool log and token budget."""

    def __init__(self, adapter: ProviderAdapter, config: RequestConfig, model: str,
                 executor: ToolExecutor | ToolHandler):
        self.adapter = adapter
        self.config = config
        self.model = model
        self.executor = executor
        handler_tools = executor.definitions if isinstance(executor, ToolHandler) else None
        self.tools = list(config.tools or handler_tools or [])
        self.known = {tool_name(tool) for tool in self.tools}
        self.body = adapter.body(config, model, self.tools) if self.tools else {}
        self.max_tokens = config.max_tokens
        self.usage = Usage()
        self.log: list[dict] = []

    def run(self) -> ApiResponse:
        """Loops until the model stops calling tools or `max_tool_rounds` is reached."""
        refusal = self._refusal()
        if refusal is not None:
            return self.fail(self.adapter.problem("invalid_request", refusal))
        try:
            return self._rounds()
        except Refused as refused:
            return self.fail(refused.problem)
        except Exception as exc:
            problem = self.adapter.failure(exc)
        fallback = None if self.log else self.adapter.fallback(self, problem)
        return fallback if fallback is not None else self.fail(problem)

    def _refusal(self) -> str | None:
        if not self.tools:
            return "tool_request() needs config.tools"
        if self.config.prefill:
            return "a prefill cannot be combined with tools"
        if self.config.max_tool_rounds < 1:
            return "max_tool_rounds must be at least 1"
        return None

    def _rounds(self) -> ApiResponse:
        answer = None
        for round_num in range(1, self.config.max_tool_rounds + 1):
            log.info("tool round %d/%d for %s", round_num, self.config.max_tool_rounds,
                     self.config.request_type)
            answer = self._turn()
            if answer.stop_reason != "tool_use" or not answer.calls:
                return self.finish(answer, answer.stop_reason)
            results = self.execute(answer.calls)
            self.record(round_num, answer.calls, results)
            self.adapter.append_round(self.body, answer, results)
            if self._must_stop(results):
                failed = ", ".join(result.name for result in results if result.is_error)
                raise Refused(self.adapter.problem("tool_execution_failed", failed))
        log.warning("tool_request for %s stopped after %d rounds", self.config.request_type,
                    self.config.max_tool_rounds)
        assert answer is not None  # max_tool_rounds >= 1 was checked
        return self.finish(answer, "max_tool_rounds")

    def _turn(self) -> Round:
        """One model turn; asked again once with a doubled budget if cut off in a tool call."""
        answer = self.call(self.body)
        if not _cut_in_tool_call(answer):
            return answer
        if self.max_tokens >= MAX_TOKENS_CAP:
            raise Refused(self.adapter.problem("truncated_tool_call"))
        self.max_tokens = min(self.max_tokens * 2, MAX_TOKENS_CAP)
        log.warning("a tool call was cut off by max_tokens; asking again with max_tokens=%d",
                    self.max_tokens)
        answer = self.call(self.body)
        if _cut_in_tool_call(answer):
            raise Refused(self.adapter.problem("truncated_tool_call"))
        return answer

    def call(self, body: dict) -> Round:
        """One round through the adapter with the current budget; its usage is counted."""
        answer = self.adapter.complete(body, self.max_tokens)
        self.usage.add(answer.usage)
        return answer

    def execute(self, calls: list[ToolCall]) -> list[ToolResult]:
        """Runs the calls: a ToolHandler as a batch, a plain executor one by one, guarded."""
        if isinstance(self.executor, ToolHandler):
            return self.executor.execute_batch(calls)
        return [self._run_plain(self.executor, call) for call in calls]

    @staticmethod
    def _run_plain(executor: ToolExecutor, call: ToolCall) -> ToolResult:
        return run_guarded(call, lambda: executor(call.name, call.arguments))

    def record(self, round_num: int, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """Adds calls and their results to the run's tool log (`ApiResponse.tool_results`)."""
        for call, result in zip(calls, results, strict=True):
            log.info("tool %s [%s] -> success=%s", call.name, call.id, not result.is_error)
            self.log.append({"round": round_num, "tool_name": call.name,
                             "tool_input": call.arguments, "tool_use_id": call.id,
                             "success": not result.is_error, "result": result.content})

    def _must_stop(self, results: list[ToolResult]) -> bool:
        handler = self.executor if isinstance(self.executor, ToolHandler) else None
        return handler is not None and not handler.continue_on_error and \
            any(result.is_error for result in results)

    def finish(self, answer: Round, stop_reason: str | None) -> ApiResponse:
        """The successful end of the run."""
        return ApiResponse(success=True, content=answer.text, usage=self.usage.totals,
                           raw_response=answer.raw, stop_reason=stop_reason,
                           tool_results=self.log or None)

    def fail(self, problem: ApiFailure) -> ApiResponse:
        """The failed end of the run; the usage and tool log so far are kept."""
        return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                           retryable=problem.retryable, usage=self.usage.totals or None,
                           tool_results=self.log or None)


def _cut_in_tool_call(answer: Round) -> bool:
    return answer.stop_reason == "max_tokens" and bool(answer.calls)
