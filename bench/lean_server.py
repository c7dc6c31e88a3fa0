"""The lean chat server: the floor the app's chat turn is measured against (issue #23).

It does what a chat turn must do and nothing else, in its own process under gevent, like one
of the app's workers: a WebSocket frame `{"type": "chat", "session_id", "message"}` (or
`POST /api/chat/stream`, answered as Server-Sent Events) stores the person's message and an
empty reply in one SQLite WAL transaction, reads the history back (newest 40 messages, like the
app's default context limit), builds the prompt from it (the app's system blocks with this
session's name), streams the reply with the official SDK on one shared client, decoding the
raw response with the app's SSE decoder (`api_request/raw_stream.py`; for Chat Completions the
request goes through the app's `openai_raw.open_stream`, the client's `post`, and the body is
read as plain `data:` lines), sends one frame per text
delta, and stores the final text in a second transaction. No cortex, titles, followers,
leases, inspector or settings: what is left is what any server doing this turn pays.
With `app-store` the turn's storage is instead the app's own, statement for statement (the
app's migrated database, its storage functions, the prompt record; bench/lean_store.py's
`AppStore`): the floor of a server that does the app's storage work and nothing else of it.
This file serves the turn with gevent.pywsgi (the `pywsgi` stack); bench/lean_gunicorn.py serves
the same `Lean` with the same command line behind gunicorn's gevent worker and a bare Flask
route (the `gunicorn` stack, SSE only: the app's HTTP stack as a floor).

    python bench/lean_server.py PORT FAKE_URL DB_PATH [anthropic|openai_compatible] [plain|app-store]

Several processes may serve one PORT (SO_REUSEPORT, like gunicorn's workers sharing a listener)
and one DB_PATH. Prints `{"url": ...}` once listening; stdin lines: `{"system": [...], "model":
..., "max_tokens": ..., "name": "Bench 0"}` sets the prompt template (the app's system blocks,
whose persona name is replaced by each session's), `quit` ends it.
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import gevent.queue  # noqa: E402
from gevent.fileobject import FileObjectThread  # noqa: E402
from gevent.pywsgi import WSGIServer  # noqa: E402
from simple_websocket import ConnectionClosed, Server  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.lean_store import AppStore, PlainStore  # noqa: E402
from src.utils.api_request import openai_raw, raw_stream  # noqa: E402
from src.utils.api_request.types import SentRequest  # noqa: E402
from src.worker_memory import settle_heap  # noqa: E402

KEY = "sk-ant-bench-0000000000000000"
STORES = {"plain": PlainStore, "app-store": AppStore}


class Lean:
    """One process of the lean server."""

    def __init__(self, fake_url: str, db_path: str, provider: str, store: str = "plain"):
        self.store = STORES[store](db_path)
        self.provider = provider
        self.template: dict = {"system": [{"type": "text", "text": "You are Bench 0."}],
                               "model": "claude-sonnet-5-5", "max_tokens": 2048,
                               "name": "Bench 0"}
        if provider == "openai_compatible":
            import openai
            self.sdk = openai.OpenAI(api_key=KEY, base_url=fake_url, max_retries=0, timeout=120)
        else:
            import anthropic
            self.sdk = anthropic.Anthropic(api_key=KEY, base_url=fake_url, max_retries=0,
                                           timeout=120)

    def turn(self, session_id: str, text: str, emit) -> None:
        """One chat turn; `emit(type, data)` sends an event to the client."""
        opened = self.store.start(session_id, text)
        emit("start", {"session_id": session_id, "message_id": opened.user_id,
                       "reply_id": opened.reply_id})
        template = self.template
        name = f"Lean {session_id}"
        system = [{**block, "text": block["text"].replace(template["name"], name)}
                  for block in template["system"]]
        sent: list[SentRequest] = []
        usage: dict = {}
        pieces = list(self._stream(system, opened.history, emit, sent, usage))
        final = "".join(pieces)
        self.store.finish(opened, final, sent[0] if sent else None, usage or None, system)
        emit("done", {"message_id": opened.reply_id, "text": final, "usage": {},
                      "stop_reason": "end_turn", "cortex": None})

    def _sent(self, response, sent: list[SentRequest], model: str) -> None:
        """The body as the SDK sent it, when the store records it (the app's prompt record)."""
        if self.store.records:
            sent.append(SentRequest(self.provider, model,
                                    bytes(response.http_response.request.content)))

    def _stream(self, system: list[dict], history: list[dict], emit, sent: list[SentRequest],
                usage: dict):
        template = self.template
        if self.provider == "openai_compatible":
            yield from self._openai(system, history, template, emit, sent)
            return
        with raw_stream.open_stream(self.sdk, {
                "model": template["model"], "max_tokens": template["max_tokens"],
                "system": system, "messages": history}) as response:
            self._sent(response, sent, template["model"])
            for event in raw_stream.events(response):
                kind = event["type"]
                if kind == "content_block_delta":
                    delta = event["delta"]
                    if delta.get("type") == "text_delta" and delta["text"]:
                        emit("chunk", {"text": delta["text"]})
                        yield delta["text"]
                elif kind == "message_delta" and self.store.records:
                    usage.update(event.get("usage") or {})

    def _openai(self, system: list[dict], history: list[dict], template: dict, emit,
                sent: list[SentRequest]):
        messages = [{"role": "system", "content": "\n\n".join(b["text"] for b in system)},
                    *history]
        with openai_raw.open_stream(self.sdk, {
                "stream_options": {"include_usage": True}, "model": template["model"],
                "max_tokens": template["max_tokens"], "messages": messages}) as opened:
            self._sent(opened, sent, template["model"])
            for line in opened.http_response.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                for choice in chunk.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        emit("chunk", {"text": text})
                        yield text

    def app(self, environ, start_response):
        """The WSGI application: `/ws/chat` and `POST /api/chat/stream`."""
        path = environ.get("PATH_INFO")
        if path == "/ws/chat":
            self._websocket(environ)
            start_response("200 OK", [])
            return []
        if path == "/api/chat/stream" and environ["REQUEST_METHOD"] == "POST":
            body = json.loads(environ["wsgi.input"].read())
            start_response("200 OK", [("Content-Type", "text/event-stream"),
                                      ("Cache-Control", "no-cache")])
            return self.sse(body["session_id"], body["message"])
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]

    def _websocket(self, environ) -> None:
        ws = Server(environ)

        def emit(kind: str, data: dict) -> None:
            ws.send(json.dumps({"type": kind, **data}, ensure_ascii=False))
        try:
            while True:
                frame = json.loads(ws.receive())
                if frame.get("type") == "chat":
                    self.turn(frame["session_id"], frame["message"], emit)
        except ConnectionClosed:
            pass

    def sse(self, session_id: str, message: str):
        """The turn as Server-Sent Events (one record per event), for any WSGI stack."""
        queue: gevent.queue.Queue = gevent.queue.Queue()

        def emit(kind: str, data: dict) -> None:
            queue.put(f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
                      .encode())

        def run() -> None:
            try:
                self.turn(session_id, message, emit)
            finally:
                queue.put(None)
        gevent.spawn(run)
        while (record := queue.get()) is not None:
            yield record


def listener(port: int) -> socket.socket:
    """A listening socket on `port` that other lean processes may share. Its connections
    inherit TCP_NODELAY from it, as the app's inherit it from gunicorn's listener: a chunk is a
    small write that must not wait for an ACK, on the WebSocket and on SSE alike (until the
    eleventh session only the WebSocket had it, so the lean SSE turn ran with Nagle's
    algorithm and the app's without)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    return sock


def main() -> None:
    port, fake_url, db_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    lean = Lean(fake_url, db_path, sys.argv[4] if len(sys.argv) > 4 else "anthropic",
                sys.argv[5] if len(sys.argv) > 5 else "plain")
    server = WSGIServer(listener(port), lean.app, log=None, error_log=None)
    server.start()
    settle_heap()  # the app's workers' heap settings (worker_memory.py), for a fair comparison
    print(json.dumps({"url": f"http://127.0.0.1:{port}"}), flush=True)
    for line in FileObjectThread(sys.stdin):
        if line.strip() == "quit":
            break
        lean.template = json.loads(line)
        settle_heap()  # after the warm-up turns: what they imported and cached
        print("{}", flush=True)
    server.stop(timeout=1)
    lean.sdk.close()


if __name__ == "__main__":
    main()
