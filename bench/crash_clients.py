"""The clients bench/crash_loop.py runs against the server between two kills.

Threads: two SSE chatters (each message carries a unique `FACT-…` token), two cortex editors
(GET, then PUT with If-Match appending a tagged line; 412 means read again), one updater
(POST …/cortex/update), and one deleter that creates a persona, writes to it, queues an update,
and deletes it while a racer GETs and PUTs its memory.md. What the server acknowledged is
recorded for the checks: a chat turn that got `done`, a PUT that got 200, a DELETE that got 200.
Stable personas are replaced every `ROTATE` cycles so memory.md stays under its hard cap.
"""
from __future__ import annotations

import http.client
import json
import threading
import uuid
from collections import Counter
from urllib.parse import urlsplit

ROTATE = 25
PERSONAS = 3
TIMEOUT = 15


def request(base: str, method: str, path: str, body=None, headers=None):
    """(status, headers, JSON body) of one request; raises OSError-like errors when down."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        data = None if body is None else json.dumps(body)
        conn.request(method, path, data, {"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        raw = response.read()
        payload = json.loads(raw) if raw and "json" in response.getheader("Content-Type", "") \
            else None
        return response.status, response.headers, payload
    finally:
        conn.close()


class Load:
    """The client threads of one cycle, and everything acknowledged over all cycles."""

    def __init__(self, rng):
        self.rng = rng
        self.personas: list[tuple[str, str]] = []
        self.acked_chats: list[tuple[str, str, int]] = []
        self.acked_puts: list[tuple[str, str, int]] = []
        self.acked_deletes: set[str] = set()
        self.delete_attempted: set[str] = set()
        self.counts: Counter = Counter()
        self._cycles = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def setup(self, base: str) -> None:
        """Creates a fresh set of stable personas (with a session each) every ROTATE cycles."""
        if self._cycles % ROTATE == 0:
            self.personas = [self._new_persona(base, f"Stable {self._cycles}-{i}")
                             for i in range(PERSONAS)]
        self._cycles += 1

    def start(self, base: str) -> None:
        """Starts the client threads."""
        self._stop.clear()
        roles = [self._chatter, self._chatter, self._editor, self._editor, self._updater,
                 self._deleter]
        self._threads = [threading.Thread(target=self._loop, args=(role, base, i), daemon=True)
                         for i, role in enumerate(roles)]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stops the threads (the server is already gone, so they fail fast)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(TIMEOUT * 2)

    def totals(self) -> dict:
        """What the clients did and what the server acknowledged."""
        return {"acked_chat_turns": len(self.acked_chats), "acked_puts": len(self.acked_puts),
                "acked_deletes": len(self.acked_deletes), **dict(sorted(self.counts.items()))}

    def _loop(self, role, base: str, index: int) -> None:
        rng = __import__("random").Random(self.rng.random())
        while not self._stop.is_set():
            try:
                role(base, rng)
            except (OSError, http.client.HTTPException, ValueError):
                self.counts["request_errors"] += 1
                self._stop.wait(0.05)

    def _new_persona(self, base: str, name: str) -> tuple[str, str]:
        status, _, persona = request(base, "POST", "/api/personas", {"name": name})
        if status != 201:
            raise RuntimeError(f"could not create a persona: {status} {persona}")
        status, _, session = request(base, "POST", "/api/sessions", {"persona_id": persona["id"]})
        if status != 201:
            raise RuntimeError(f"could not create a session: {status} {session}")
        return persona["id"], session["id"]

    def _chatter(self, base: str, rng) -> None:
        _persona_id, session_id = rng.choice(self.personas)
        text = f"Remember FACT-{uuid.uuid4().hex[:12]} please."
        parts = urlsplit(base)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
        try:
            conn.request("POST", "/api/chat/stream", json.dumps(
                {"session_id": session_id, "message": text}), {"Content-Type": "application/json"})
            response = conn.getresponse()
            self.counts["chat_turns_sent"] += 1
            kind = None
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "done":
                    self.acked_chats.append((session_id, text, json.loads(line[6:])["message_id"]))
                    return
        finally:
            conn.close()

    def _editor(self, base: str, rng, persona_id: str | None = None) -> None:
        persona_id = persona_id or rng.choice(self.personas)[0]
        path = f"/api/personas/{persona_id}/cortex/memory.md"
        status, headers, file = request(base, "GET", path)
        if status != 200:
            return
        tag = f"edit-{uuid.uuid4().hex[:10]}"
        status, _, saved = request(base, "PUT", path, {"content": file["content"] + f"- {tag}\n"},
                                   {"If-Match": headers["ETag"]})
        self.counts[f"put_{status}"] += 1
        if status == 200:
            self.acked_puts.append((persona_id, tag, saved["revision"]))

    def _updater(self, base: str, rng) -> None:
        persona_id = rng.choice(self.personas)[0]
        status, _, _ = request(base, "POST", f"/api/personas/{persona_id}/cortex/update", {})
        self.counts[f"update_{status}"] += 1
        self._stop.wait(rng.uniform(0.05, 0.3))

    def _deleter(self, base: str, rng) -> None:
        persona_id, _ = self._new_persona(base, "Victim")
        self._editor(base, rng, persona_id)
        request(base, "POST", f"/api/personas/{persona_id}/cortex/update", {})
        racing = threading.Event()

        def race() -> None:
            while not racing.is_set():
                try:
                    self._editor(base, rng, persona_id)
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    return

        racer = threading.Thread(target=race, daemon=True)
        racer.start()
        try:
            self._stop.wait(rng.uniform(0, 0.1))
            self.delete_attempted.add(persona_id)
            status, _, _ = request(base, "DELETE", f"/api/personas/{persona_id}")
            self.counts[f"delete_{status}"] += 1
            if status == 200:
                self.acked_deletes.add(persona_id)
        finally:
            racing.set()
            racer.join(TIMEOUT * 2)
