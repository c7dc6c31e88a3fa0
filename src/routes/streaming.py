"""The Server-Sent Events response shared by the chat and regenerate routes."""
from typing import Iterator

from flask import Response

from ..utils.services.chat_events import ChatEvent, to_sse

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse_response(events: Iterator[ChatEvent]) -> Response:
    """Streams `events`; when the client goes away the server closes the body, which closes
    `events` and so cancels the upstream request."""
    def body():
        try:
            for event in events:
                yield to_sse(event)
        finally:
            events.close()

    return Response(body(), mimetype="text/event-stream", headers=SSE_HEADERS)
