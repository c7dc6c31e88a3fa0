"""A registry of tools that runs one turn's calls in parallel, each with a time limit.

A call that overruns its timeout is answered with an error result and abandoned (Python cannot
stop a thread); its slot is freed so the rest of the turn still runs. Results always come back
in call order, which is the order the API needs them in.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .types import ToolCall, ToolDefinition, ToolResult

log = logging.getLogger(__name__)

ToolFunction = Callable[[ToolCall], Any]
SKIPPED = "Not run because an earlier tool call in this turn failed."


def result_from(call: ToolCall, outcome: Any) -> ToolResult:
    """Normalises what an executor returned (a ToolResult, `(success, text)` or text) for `call`."""
    if isinstance(outcome, ToolResult):
        return ToolResult(call.id, call.name, str(outcome.content), outcome.is_error)
    if isinstance(outcome, str):
        return ToolResult.success(call.id, call.name, outcome)
    if isinstance(outcome, tuple) and len(outcome) == 2 and isinstance(outcome[0], bool):
        text = outcome[1] if isinstance(outcome[1], str) else str(outcome[1])
        return ToolResult(call.id, call.name, text, not outcome[0])
    return ToolResult.error(call.id, call.name, f"Tool {call.name} returned an unusable result.")


def run_guarded(call: ToolCall, function: Callable[[], Any]) -> ToolResult:
    """Runs one executor; an exception becomes an error result the model can read."""
    try:
        return result_from(call, function())
    except Exception as exc:
        log.warning("tool %s failed: %s", call.name, exc, exc_info=True)
        return ToolResult.error(call.id, call.name, f"Tool {call.name} failed: {exc}")


class ToolHandler:
    """Registered tools with their executors; runs a turn's calls with a bound and a timeout."""

    def __init__(self, max_parallel: int = 4, timeout: float | None = 30.0,
                 continue_on_error: bool = True):
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        self.max_parallel = max_parallel
        self.timeout = timeout
        self.continue_on_error = continue_on_error
        self._definitions: dict[str, ToolDefinition] = {}
        self._executors: dict[str, ToolFunction] = {}

    def register(self, definition: ToolDefinition, executor: ToolFunction) -> None:
        """Adds a tool; `executor(call)` returns a ToolResult, `(success, text)` or text."""
        self._definitions[definition.name] = definition
        self._executors[definition.name] = executor

    @property
    def definitions(self) -> list[ToolDefinition]:
        """The registered tools, in registration order (what the model is offered)."""
        return list(self._definitions.values())

    def has_tool(self, name: str) -> bool:
        """Whether a tool of that name is registered."""
        return name in self._executors

    def execute(self, call: ToolCall) -> ToolResult:
        """Runs one call under the timeout; unknown tools get an error result."""
        return self.execute_batch([call])[0]

    def execute_batch(self, calls: list[ToolCall]) -> list[ToolResult]:
        """Runs the calls at most `max_parallel` at a time and returns results in call order."""
        return _Batch(self, calls).run()

    def _start(self, call: ToolCall, box: dict, done: threading.Condition) -> None:
        executor = self._executors[call.name]

        def work() -> None:
            result = run_guarded(call, lambda: executor(call))
            with done:
                box["result"] = result
                done.notify_all()

        threading.Thread(target=work, name=f"tool-{call.name}", daemon=True).start()


class _Batch:
    """One turn's calls: starts them under the bound, collects or times them out."""

    def __init__(self, handler: ToolHandler, calls: list[ToolCall]):
        self.handler = handler
        self.calls = calls
        self.results: list[ToolResult | None] = [None] * len(calls)
        self.done = threading.Condition()
        self.running: dict[int, tuple[dict, float | None]] = {}
        self.next_index = 0
        self.failed = False

    def run(self) -> list[ToolResult]:
        with self.done:
            while self.next_index < len(self.calls) or self.running:
                self._start_more()
                self._collect()
                if self.running:
                    self.done.wait(self._wait_time())
        return [result for result in self.results if result is not None]

    def _start_more(self) -> None:
        while self.next_index < len(self.calls) and len(self.running) < self.handler.max_parallel:
            index, call = self.next_index, self.calls[self.next_index]
            self.next_index += 1
            if self.failed and not self.handler.continue_on_error:
                self.results[index] = ToolResult.error(call.id, call.name, SKIPPED)
            elif not self.handler.has_tool(call.name):
                log.warning("the model called an unknown tool %r", call.name)
                self._record(index, ToolResult.error(call.id, call.name, f"Unknown tool: {call.name}"))
            else:
                box: dict = {}
                timeout = self.handler.timeout
                self.running[index] = (box, None if timeout is None else time.monotonic() + timeout)
                self.handler._start(call, box, self.done)

    def _collect(self) -> None:
        now = time.monotonic()
        for index, (box, deadline) in list(self.running.items()):
            call = self.calls[index]
            if "result" in box:
                self._record(index, box["result"])
            elif deadline is not None and now >= deadline:
                log.warning("tool %s timed out after %ss", call.name, self.handler.timeout)
                self._record(index, ToolResult.error(
                    call.id, call.name, f"Tool {call.name} timed out after {self.handler.timeout:g} s."))
            else:
                continue
            del self.running[index]

    def _record(self, index: int, result: ToolResult) -> None:
        self.results[index] = result
        self.failed = self.failed or result.is_error

    def _wait_time(self) -> float | None:
        deadlines = [deadline for _, deadline in self.running.values() if deadline is not None]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
