"""The chat bench's app-side clients: one slot per stream (persona, session, WebSocket, HTTP)."""
from __future__ import annotations

import http.client
import json
import select
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import websocket


def call(base: str, method: str, path: str, body: dict | None = None, timeout=30) -> dict:
    """One JSON request to the app."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def new_session(base: str, name: str) -> str:
    """A persona named `name` and a session with it; returns the session id."""
    persona = call(base, "POST", "/api/personas", {"name": name})
    return call(base, "POST", "/api/sessions", {"persona_id": persona["id"]})["id"]


def ws_turn(ws, session_id: str, message: str = "Hi!") -> float:
    """Sends a chat frame; seconds to the first `chunk` frame (then reads to `done`)."""
    frame = json.dumps({"type": "chat", "session_id": session_id, "message": message})
    start, first = time.perf_counter(), None
    ws.send(frame)
    while True:
        event = json.loads(ws.recv())
        kind = event["type"]
        if kind == "chunk" and first is None:
            first = time.perf_counter()
        elif kind in ("done", "error"):
            break
    if kind != "done" or first is None:
        raise RuntimeError(f"WebSocket stream failed: {event}")
    return first - start


class Slot:
    """One stream's client side: a persona, a session, an open socket, an HTTP connection
    (and those to the lean server, an HTTP connection to each further SSE server in `sse`, by
    name: bench/sse_floor.py's lean turn behind gunicorn and Flask, and a WebSocket to each
    further lean server in `ws`, by name: bench/floor_store.py's two floors)."""

    def __init__(self, base: str, index: int | str, lean: str | None = None,
                 sse: dict[str, str] | None = None, ws: dict[str, str] | None = None):
        self.index = index
        self.sse = {name: http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]),
                                                     timeout=120)
                    for name, url in (sse or {}).items()}
        self.others = LeanSlot(index, ws) if ws else None
        self.name = f"Bench {index}"
        self.session_id = new_session(base, self.name)
        self.ws = websocket.create_connection(base.replace("http", "ws") + "/ws/chat",
                                              timeout=120)
        self.port = int(base.rsplit(":", 1)[1])
        self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        self.http_kept = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        self.lean = websocket.create_connection(lean.replace("http", "ws") + "/ws/chat",
                                                timeout=120) if lean else None
        self.lean_http = http.client.HTTPConnection(
            "127.0.0.1", int(lean.rsplit(":", 1)[1]), timeout=120) if lean else None

    def turn(self, kind: str) -> float:
        """One turn over `ws`, `sse`, or the lean server's WebSocket (`lean`) or SSE
        (`lean_sse`), or a POST to the SSE server named `kind`, or a frame to the further
        lean server named `kind`; seconds to the first chunk."""
        if self.others is not None and kind in self.others.sockets:
            return self.others.turn(kind)
        if kind in self.sse:
            return _sse_turn(self.sse[kind], str(self.index), kept=kind.endswith("_kept"))
        if kind == "sse_kept":
            return _sse_turn(self.http_kept, self.session_id, kept=True)
        if kind in ("lean", "lean_sse"):
            assert self.lean is not None and self.lean_http is not None
            if kind == "lean_sse":
                return _sse_turn(self.lean_http, str(self.index))
            return ws_turn(self.lean, str(self.index))
        return ws_turn(self.ws, self.session_id) if kind == "ws" else \
            _sse_turn(self.http, self.session_id)

    def close(self) -> None:
        """Closes every connection."""
        self.ws.close()
        self.http.close()
        self.http_kept.close()
        for connection in self.sse.values():
            connection.close()
        if self.others is not None:
            self.others.close()
        if self.lean is not None and self.lean_http is not None:
            self.lean.close()
            self.lean_http.close()


def _sse_turn(connection: http.client.HTTPConnection, session_id: str,
              kept: bool = False) -> float:
    """POST /api/chat/stream on a new connection, as a REST client without keep-alive
    sends it (the app's and the lean server's alike), or with `kept` on the connection the
    last turn left open (so a session's turns stay with one worker, as a WebSocket's do:
    bench/sse_floor.py's `app SSE, kept connection`); seconds to the first `chunk` event
    (then reads to the end)."""
    # An idle connection that reads as readable was closed by the server (keep-alive ran out).
    open_ = kept and connection.sock is not None and \
        not select.select([connection.sock], [], [], 0)[0]
    if not open_:
        connection.close()
        connection.connect()  # connected before the clock starts, as the SDK's pool is
    body = json.dumps({"session_id": session_id, "message": "Hi!"})
    start, first, last = time.perf_counter(), None, None
    connection.request("POST", "/api/chat/stream", body,
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    for line in iter(response.readline, b""):
        if line.startswith(b"event: "):
            last = line[7:].strip()
            if last == b"chunk" and first is None:
                first = time.perf_counter()
    response.close()
    if last != b"done" or first is None:
        raise RuntimeError(f"SSE stream failed (last event {last!r})")
    return first - start


def bodies_by_slot(bodies: list[dict]) -> dict[int, dict]:
    """The newest chat request the fake received for each slot's persona (`Bench <index>`), so
    the SDK baseline sends exactly that (same system prompt, same history)."""
    found = {}
    for body in bodies:
        name = system_text(body).split(",", 1)[0]
        if name.startswith("You are Bench ") and name[14:].isdigit():
            found[int(name[14:])] = body
    return found


def system_text(body: dict) -> str:
    """The first system text of a Messages or a Chat Completions request body."""
    system = body.get("system")
    if system is None and body.get("messages") and body["messages"][0].get("role") == "system":
        system = body["messages"][0]["content"]
    if isinstance(system, list):
        return system[0]["text"] if system else ""
    return system or ""


class LeanSlot:
    """One stream's client side against lean servers only: a WebSocket to each, by name (the
    session is the slot's index, created by each server at its first turn)."""

    def __init__(self, index: int, urls: dict[str, str]):
        self.index = index
        self.sockets = {name: websocket.create_connection(url.replace("http", "ws") + "/ws/chat",
                                                          timeout=120)
                        for name, url in urls.items()}

    def turn(self, kind: str) -> float:
        """One turn on the server named `kind`; seconds to the first chunk."""
        return ws_turn(self.sockets[kind], str(self.index))

    def close(self) -> None:
        """Closes every socket."""
        for ws in self.sockets.values():
            ws.close()


def run_clients(base: str, offset: int, step: int, lean: str | None = None,
                sse: dict[str, str] | None = None, ws: dict[str, str] | None = None) -> None:
    """A client process of the app (`bench_procs.py clients`): owns the slots whose index is
    `offset` modulo `step` (with a socket to the `lean` server too, if given, a connection to
    each SSE server of `sse` and a socket to each lean server of `ws`), so the app's clients
    have as many processes (and GILs) as the SDK baseline; each slot's first turn over the
    app's WebSocket and on each server of `ws` is a warm-up (`serve_slots`)."""
    serve_slots(lambda index: Slot(base, index, lean, sse, ws), ["ws", *(ws or {})], offset,
                step)


def run_lean_clients(urls: dict[str, str], offset: int, step: int) -> None:
    """A client process of lean servers only (`bench_procs.py lean-clients`, bench/floor_store.py):
    like `run_clients`, each slot with a socket to every server of `urls` and a warm-up turn
    on each (a session's first turn starts its branch: the rounds measure later turns)."""
    serve_slots(lambda index: LeanSlot(index, urls), list(urls), offset, step)


def serve_slots(make, warm: list[str], offset: int, step: int) -> None:
    """Owns the slots (`make(index)`) whose index is `offset` modulo `step`. Reads one JSON
    command per line: `{"grow": n}` creates its slots below `n` (one warm-up turn of each kind
    in `warm`); `{"kind", "turns", "at", "n"}` runs a round on its slots below `n`, all
    starting at the wall-clock instant `at`; answers with one JSON line."""
    slots: list = []
    created = 0
    with ThreadPoolExecutor(256) as pool:
        print("{}", flush=True)
        for line in sys.stdin:
            job = json.loads(line)
            if job.get("quit"):
                break
            if "grow" in job:
                for index in range(created, job["grow"]):
                    if index % step == offset:
                        slot = make(index)
                        for kind in warm:
                            slot.turn(kind)
                        slots.append(slot)
                created = max(created, job["grow"])
                print("{}", flush=True)
                continue
            mine = [slot for slot in slots if slot.index < job["n"]]

            def go(slot, job=job):
                time.sleep(max(0.0, job["at"] - time.time()))
                return [slot.turn(job["kind"]) for _ in range(job["turns"])]
            ttfts = [t for each in pool.map(go, mine) for t in each]
            print(json.dumps({"ttfts": ttfts}), flush=True)
    for slot in slots:
        slot.close()
