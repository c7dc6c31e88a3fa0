"""The only package that talks to the anthropic SDK; callers see our own types."""
from .cancel import CancelSignal
from .client import ApiClient
from .connection_checks import EndpointChecks
from .context_window import PROVIDERS
from .errors import ApiFailure
from .handler import ToolHandler
from .streaming import ToolCallAccumulator, ToolCallStreamHandler
from .types import (
    DEFAULT_MODEL,
    MAX_TOOL_ROUNDS,
    ApiResponse,
    ChunkResponse,
    Connection,
    RequestConfig,
    SegmentEvent,
    SentRequest,
    StreamEvent,
    SystemBlock,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    ToolExecutor,
    ToolResult,
)

__all__ = [
    "ApiClient", "EndpointChecks", "ApiFailure", "Connection", "PROVIDERS", "CancelSignal", "ToolHandler", "ToolCallAccumulator", "ToolCallStreamHandler",
    "DEFAULT_MODEL", "MAX_TOOL_ROUNDS", "ApiResponse", "ChunkResponse", "RequestConfig",
    "SegmentEvent", "SentRequest", "StreamEvent", "SystemBlock", "ToolCall", "ToolCallDelta", "ToolChoice",
    "ToolDefinition", "ToolExecutor", "ToolResult",
]
