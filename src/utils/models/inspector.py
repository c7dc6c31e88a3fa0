"""The prompt inspector and the context meter (docs/prompt-inspector.md): answers only."""
from typing import Literal

from pydantic import Field

from .resource import Resource

CountedBy = Literal["provider", "estimate"]
_COUNTED_BY = ("`provider`: the provider's own count (Anthropic's count_tokens); `estimate`: "
               "UTF-8 bytes / 3, rounded up (no counting offered, or the count failed or ran "
               "out of time).")


class PromptMessage(Resource):
    """One message of the history section."""

    role: str
    text: str


class PromptSection(Resource):
    """One part of a recorded request, with its token count and where it sits in the body."""

    kind: Literal["persona", "cortex", "about", "world", "time", "system", "history", "message",
                  "instructions", "continuation"]
    label: str = Field(description="The cortex file (`memory.md`, …) or the kind.")
    text: str = Field(description="The section's text as sent (the history: its messages "
                                  "joined by a blank line).")
    tokens: int = Field(ge=0)
    counted_by: CountedBy = Field(description=_COUNTED_BY)
    cached: bool = Field(description="Inside the cached prefix (up to the last `cache_control` "
                                     "breakpoint).")
    start: int = Field(ge=0, description="Byte offset of the section's content in the body.")
    end: int = Field(ge=0, description="Byte offset after it.")
    offset: int = Field(ge=0, description="Where `raw` begins in the body.")
    raw: str = Field(description="The body's bytes from `offset` to the next section's "
                     "`offset`: joined in `offset` order they are the body, byte for byte.")
    messages: list[PromptMessage] | None = None
    revision: int | None = None
    entries: list[dict] | None = Field(None, description="The world info entries that fired "
                                                         "(as `Message.world_info`).")


class PromptUsage(Resource):
    """The usage the reply reported."""

    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cache_read_tokens: int | None = Field(None, ge=0)
    cache_write_tokens: int | None = Field(None, ge=0)
    prompt_tokens: int | None = Field(None, ge=0)


class PromptTotal(Resource):
    """The whole request's token count."""

    tokens: int = Field(ge=0)
    counted_by: CountedBy = Field(description=_COUNTED_BY)


class ReplyPrompt(Resource):
    """The recorded request in sections, with token counts, model, provider and usage."""

    message_id: int
    session_id: str
    recorded: bool = Field(description="false: a reply from before requests were recorded, "
                                       "or one still being written.")
    status: str | None = None
    provider: str | None
    model: str | None
    created_at: str | None = None
    usage: PromptUsage | None
    total: PromptTotal | None
    body_bytes: int | None = Field(None, ge=0)
    context_window: int = Field(ge=0)
    sections: list[PromptSection]


class ContextMeter(Resource):
    """Tokens of the last request (the usage it reported, else an estimate) and the window."""

    session_id: str
    reply_id: int | None
    used: int | None = Field(ge=0)
    window: int = Field(ge=0)
    provider: str | None = None
    counted_by: Literal["usage", "estimate"] | None
