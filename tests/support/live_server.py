"""A real threaded werkzeug server in a background thread, for socket-level tests."""
import threading
from typing import Self

from werkzeug.serving import make_server


class LiveServer:
    """Serves `app` on 127.0.0.1:<free port>; `url` is its base URL, `ws_url` the ws:// twin."""

    def __init__(self, app, host: str = "127.0.0.1"):
        self._server = make_server(host, 0, _whole_bodies(app), threaded=True)
        self._server.daemon_threads = True
        self.port = self._server.server_port
        self.url = f"http://{host}:{self.port}"
        self.ws_url = f"ws://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _whole_bodies(app):
    """`app` with every response of known length (static files, JSON) read whole and its file
    closed before werkzeug writes it. werkzeug's development server closes a response only
    after a cleanup that itself fails on a connection the browser already reset (a page left
    mid-download), so a static file would stay open until garbage collection and its
    ResourceWarning would fail whichever test is running then. A response without a body (a
    304 to a browser revalidating a cached script, a 204, a HEAD) still holds the file until
    it is closed, so it is closed here too. Streams (SSE) pass through."""
    def serve(environ, start_response):
        headers = []
        statuses = []

        def start(status, response_headers, exc_info=None):
            headers[:] = response_headers
            statuses[:] = [status]
            return start_response(status, response_headers, exc_info)
        body = app(environ, start)
        bodiless = environ.get("REQUEST_METHOD") == "HEAD" or (
            statuses and statuses[0].split(" ", 1)[0] in ("204", "304"))
        if not bodiless and not any(name.lower() == "content-length" for name, _ in headers):
            return body
        try:
            return [b"".join(body)]
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
    return serve
