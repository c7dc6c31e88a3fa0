"""Provider-neutral request, response and tool types: the only shapes that leave this package."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_TOOL_ROUNDS = 10
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_WINDOWS = {"anthropic": 200_000, "openai_compatible": 8192}

ToolExecutor = Callable[[str, dict], tuple[bool, str]]


@dataclass(frozen=True)
class SystemBlock:
    """One part of a system prompt; `cache=True` puts a prompt-cache breakpoint after it;
    `label` names the part for the prompt inspector (never sent)."""

    text: str
    cache: bool = False
    label: str = ""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool the model may call, described by a JSON schema for its input."""

    name: str
    description: str
    input_schema: dict


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for, with its arguments already parsed."""

    id: str
    name: str
    arguments: dict


@dataclass(frozen=True)
class ToolResult:
    """The answer to one `ToolCall`; `is_error` tells the model the call failed."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False

    @classmethod
    def success(cls, tool_call_id: str, name: str, content: str) -> ToolResult:
        """A result for a call that worked."""
        return cls(tool_call_id, name, content, False)

    @classmethod
    def error(cls, tool_call_id: str, name: str, content: str) -> ToolResult:
        """A result that tells the model its call failed and why."""
        return cls(tool_call_id, name, content, True)


_CHOICE_MODES = ("auto", "any", "none", "tool")


@dataclass(frozen=True)
class ToolChoice:
    """Whether the model may, must, must not, or must use one named tool."""

    mode: str
    name: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in _CHOICE_MODES:
            raise ValueError(f"unknown tool choice {self.mode!r}; use one of {_CHOICE_MODES}")
        if (self.mode == "tool") != bool(self.name):
            raise ValueError("a tool name is required exactly when mode is 'tool'")

    @classmethod
    def auto(cls) -> ToolChoice:
        """The model decides whether to call tools."""
        return cls("auto")

    @classmethod
    def any(cls) -> ToolChoice:
        """The model must call at least one tool."""
        return cls("any")

    required = any

    @classmethod
    def none(cls) -> ToolChoice:
        """The model must not call tools."""
        return cls("none")

    @classmethod
    def tool(cls, name: str) -> ToolChoice:
        """The model must call the named tool."""
        return cls("tool", name)

    @classmethod
    def parse(cls, value: ToolChoice | str) -> ToolChoice:
        """Accepts a ToolChoice or one of "auto", "any", "required", "none"."""
        if isinstance(value, ToolChoice):
            return value
        return cls("any" if value == "required" else value)


@dataclass(frozen=True)
class Connection:
    """The endpoint a request goes to and the key that belongs to it (never in a repr);
    `context_window` None means the provider's default."""

    provider: str = "anthropic"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    context_window: int | None = None

    @property
    def window(self) -> int:
        """The window in tokens this request must fit."""
        return self.context_window or DEFAULT_WINDOWS.get(self.provider, 8192)


@dataclass(frozen=True)
class SentRequest:
    """A streamed request as it went on the wire: provider, model and the exact body bytes."""

    provider: str
    model: str
    body: bytes


@dataclass
class RequestConfig:
    """Everything one request needs; `temperature` is sent only when set (Claude uses `effort`)."""

    system_prompt: str | list[SystemBlock]
    messages: list[dict]
    model: str | None = None
    max_tokens: int = 500
    temperature: float | None = None
    stream: bool = False
    prefill: str | None = None
    request_type: str = "generic"
    tools: Sequence[ToolDefinition | dict] | None = None
    tool_choice: ToolChoice | None = None
    disable_parallel_tool_use: bool = False
    effort: str | None = None
    cache_system: bool = False
    max_tool_rounds: int = MAX_TOOL_ROUNDS
    on_sent: Callable[[SentRequest], None] | None = None
    # where it goes, read by the caller with the rest of its settings just before (a chat
    # turn's); None: the client reads the settings itself (`ApiClient.connection`)
    connection: Connection | None = None


@dataclass
class ApiResponse:
    """The result of a non-streaming request; on failure `error` is a stable code.

    `raw_response` is the API's last message as plain JSON data (never an SDK object).
    """

    success: bool
    content: str = ""
    error: str | None = None
    usage: dict[str, int] | None = None
    raw_response: Any = None
    stop_reason: str | None = None
    tool_results: list[dict[str, Any]] | None = None
    error_message: str | None = None
    retryable: bool = False


@dataclass
class StreamEvent:
    """One event of a stream: `chunk` (str), `segment` (SegmentEvent), then one `done` or `error`."""

    event_type: str
    data: Any


@dataclass(frozen=True)
class ToolCallDelta:
    """A streamed piece of a tool call; id and name come only with the first piece of an index."""

    index: int
    call_id: str | None = None
    name: str | None = None
    arguments_delta: str | None = None


@dataclass
class ChunkResponse:
    """What one streamed chunk carries: text, tool-call pieces, completion and usage."""

    content: str = ""
    tool_calls: list[ToolCallDelta] | None = None
    is_complete: bool = False
    usage: dict[str, int] | None = None


@dataclass(frozen=True)
class SegmentEvent:
    """Start, content or end of a text or tool-call segment while a response streams."""

    event_type: str
    segment_id: str
    segment_type: str
    payload: dict = field(default_factory=dict)
