"""The Server-Sent Events response shared by the chat routes.

Every event carries an `id:` of the form `<reply_id>:<offset>` (characters of the reply sent so
far), so a client that lost the connection sends it back as `Last-Event-ID` to
`GET /api/sessions/<sid>/stream` and gets exactly the rest. Closing the response only stops
following: the reply goes on (stop is `POST /api/sessions/<sid>/stop`).
"""
import re
from collections.abc import Generator, Iterator

from flask import Response

from ..utils.provider import get_chat_service
from ..utils.services.chat_events import ChatEvent, to_sse
from ..utils.services.generations import Generation

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_EVENT_ID = re.compile(r"([0-9]{1,18}):([0-9]{1,9})")


def sse_response(events: Generator[ChatEvent, None, None], reply_id: int | None = None,
                 offset: int = 0, *, greet: bool = False) -> Response:
    """Streams `events` with resumable ids (when `reply_id` is known); `greet` sends a comment
    line first, so the headers leave at once even when the next text is a while away."""
    def body() -> Iterator[str]:
        position, rid = offset, reply_id
        if greet:
            yield ": following\n\n"
        try:
            for event in events:
                if event.type == "chunk":
                    position += len(event.data.get("text") or "")
                rid = rid or event.data.get("reply_id")  # a resume's `start` names the reply
                yield to_sse(event, f"{rid}:{position}" if rid else None)
        finally:
            events.close()

    return Response(body(), mimetype="text/event-stream", headers=SSE_HEADERS)


def reply_response(generation: Generation) -> Response:
    """Streams a reply that was just started (chat, regenerate, continue) from its beginning."""
    return sse_response(get_chat_service().follow(generation), generation.reply_id,
                        generation.prefix_length)


def parse_event_id(value: str | None) -> tuple[int, int] | None:
    """`(reply_id, offset)` from a Last-Event-ID header, or None when absent or malformed."""
    match = _EVENT_ID.fullmatch((value or "").strip())
    return (int(match[1]), int(match[2])) if match else None
