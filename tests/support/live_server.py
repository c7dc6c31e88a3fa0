"""A real threaded werkzeug server in a background thread, for socket-level tests."""
import threading

from werkzeug.serving import make_server


class LiveServer:
    """Serves `app` on 127.0.0.1:<free port>; `url` is its base URL, `ws_url` the ws:// twin."""

    def __init__(self, app, host: str = "127.0.0.1"):
        self._server = make_server(host, 0, app, threaded=True)
        self._server.daemon_threads = True
        self.port = self._server.server_port
        self.url = f"http://{host}:{self.port}"
        self.ws_url = f"ws://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> "LiveServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
