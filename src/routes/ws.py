"""WebSocket routes (flask-sock); `sock` is bound to the app in `create_app`."""
import logging

from flask_sock import Sock

from ..utils import provider
from ..utils.services.chat_socket import run_chat_socket

log = logging.getLogger(__name__)
sock = Sock()


@sock.route("/ws/chat")
def chat(ws):
    """The browser's chat connection (frames and events: see docs/chat.md)."""
    try:
        run_chat_socket(ws, provider.get_chat_service(),
                        subscribe_jobs=provider.get_cortex_worker().subscribe,
                        titles=provider.get_title_generator(),
                        after_frame=provider.get_db().close_thread)
    except OSError as err:  # the socket is gone; no HTTP error can be written into it
        log.info("WebSocket connection lost: %s", err)
