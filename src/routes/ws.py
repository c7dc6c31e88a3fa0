"""The chat WebSocket (upgrade).

The browser's chat connection (WebSocket, RFC 6455). Client frames: `chat` starts a reply,
`regenerate` adds another reply (earlier ones stay as alternatives), `continue` extends a reply,
`resume` follows the reply in flight of a session (after a reload, from any tab or worker), `stop`
cancels a reply (it ends with `done`, `stop_reason: cancelled`), `subscribe` follows a persona's
cortex updates. Replies are generated on the server independently of the socket: closing it never
stops one. Server frames: `start`, `chunk`, `done`, `error` (the SSE stream's events as
`{"type": <event>, ...data}`), and pushed `cortex` (an update finished), `title` (a session got
its generated title) and `subscribed`. One reply at a time per connection (`error` `busy`
otherwise); a malformed frame gets `error` `invalid_request` and the connection stays open.
Schemas: `x-websocket`.
"""
# This docstring is the OpenAPI description of `GET /ws/chat` (src/utils/openapi/chat.py).
# flask-sock: `sock` is bound to the app in `create_app`.
import logging

from flask_sock import Sock
from simple_websocket import Server

from ..utils import provider
from ..utils.services.chat_socket import run_chat_socket
from ..utils.ws_text import TextFrames

log = logging.getLogger(__name__)
sock = Sock()


@sock.route("/ws/chat")
def chat(ws: Server) -> None:
    """The browser's chat connection (frames and events: see docs/chat.md)."""
    chat_service = provider.get_chat_service()
    try:
        run_chat_socket(TextFrames(ws), chat_service,
                        subscribe_jobs=provider.get_cortex_worker().subscribe,
                        titles=provider.get_title_generator(),
                        after_frame=chat_service.release_connection)
    except OSError as err:  # the socket is gone; no HTTP error can be written into it
        log.info("WebSocket connection lost: %s", err)
