"""What a provider must provide for the one engine: the adapter protocol and its neutral shapes.

The engine (`engine.py`, `tool_loop.py`, `stream_run.py`) decides everything that is not about
wire formats, once for every provider: the tool loop, truncation, the stream's bounds and the
order of its end-of-stream checks. An adapter only translates: it builds a request body, runs one
non-streaming round, opens a stream and turns its raw events into `Delta`s, appends a round to the
history and maps an exception to a §4 failure. A third provider is one more adapter file.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import ApiFailure
from .types import ApiResponse, RequestConfig, ToolCall, ToolCallDelta, ToolDefinition, ToolResult


class Refused(Exception):
    """A round the adapter or the loop will not go on with, with the failure to report."""

    def __init__(self, problem: ApiFailure):
        super().__init__(problem.code)
        self.problem = problem


@dataclass
class Round:
    """One complete non-streaming answer in neutral terms.

    `stop_reason` uses the Messages API's words (`end_turn`, `tool_use`, `max_tokens`, …);
    `raw` is the answer as plain JSON data; `content` is whatever the adapter needs to append
    this round to the history (kept opaque to the engine).
    """

    text: str
    calls: list[ToolCall]
    stop_reason: str | None
    usage: dict[str, int]
    raw: dict
    content: Any = None


@dataclass(frozen=True)
class Delta:
    """One neutral piece of a stream; an adapter's translator yields these from raw events.

    `usage` replaces the counters seen so far; `complete` is the provider's own end marker
    (Anthropic's `message_stop`), after which nothing can be missing.
    """

    text: str = ""
    tool: ToolCallDelta | None = None
    close_tool: int | None = None
    usage: dict[str, int] | None = None
    stop_reason: str | None = None
    complete: bool = False


class RawStream(Protocol):
    """An open streaming response."""

    def events(self) -> Iterator[Any]:
        """The raw events in order (raises on a broken stream)."""

    def abort(self) -> None:
        """Breaks the connection off from any thread, waking a blocked reader."""

    def close(self) -> None:
        """Releases the response."""


class Translator(Protocol):
    """Turns one stream's raw events into Deltas (one instance per stream; may keep state)."""

    def feed(self, event: Any) -> list[Delta]:
        """The deltas one raw event carries."""


class ProviderAdapter(Protocol):
    """A provider's wire format behind the engine (see the module docstring)."""

    secret: str | None
    timeout: float

    def body(self, config: RequestConfig, model: str,
             tools: Sequence[ToolDefinition | dict] | None) -> dict:
        """The request body for `config` (without `stream`), offering `tools` when given."""

    def complete(self, body: dict, max_tokens: int) -> Round:
        """Runs one non-streaming round with `max_tokens` as the answer's budget."""

    def open_stream(self, body: dict) -> RawStream:
        """Sends `body` as a streaming request (raises when the request is refused)."""

    def translator(self) -> Translator:
        """A fresh translator for one stream."""

    def append_round(self, body: dict, answer: Round, results: list[ToolResult]) -> None:
        """Appends the assistant's turn and the answers to its calls to `body`'s history."""

    def failure(self, exc: BaseException) -> ApiFailure:
        """What an exception raised by this provider's client means (§4 code, masked text)."""

    def problem(self, code: str, detail: str | None = None) -> ApiFailure:
        """The failure `code` in this provider's words."""

    def fallback(self, loop: LoopView, problem: ApiFailure) -> ApiResponse | None:
        """A last resort when the first tool round failed with `problem` (None: no fallback)."""


class LoopView(Protocol):
    """What a fallback may use of the running tool loop (`ToolLoop` provides it)."""

    config: RequestConfig
    model: str
    tools: list[ToolDefinition | dict]
    known: set[str]

    def call(self, body: dict) -> Round:
        """One round through the adapter, its usage counted."""

    def execute(self, calls: list[ToolCall]) -> list[ToolResult]:
        """Runs calls through the loop's executor, results in call order."""

    def record(self, round_num: int, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """Adds calls and their results to the run's tool log."""

    def finish(self, answer: Round, stop_reason: str | None) -> ApiResponse:
        """The successful end of the run."""

    def fail(self, problem: ApiFailure) -> ApiResponse:
        """The failed end of the run (usage and tool log kept)."""


@dataclass
class Usage:
    """Token counts summed over a run's rounds."""

    totals: dict[str, int] = field(default_factory=dict)

    def add(self, more: dict[str, int]) -> None:
        """Adds one round's counts, key by key."""
        self.totals = {key: self.totals.get(key, 0) + more.get(key, 0)
                       for key in {**self.totals, **more}}


def tool_name(tool: ToolDefinition | dict) -> str:
    """The name of a tool in either form."""
    return tool["name"] if isinstance(tool, dict) else tool.name
