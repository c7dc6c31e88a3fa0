"""Helpers for the world info tests: a persona with a book made over REST, a chat turn over the
real WebSocket, and the recorded request split at the cache breakpoint."""
import re

from tests.chat.chat_support import ChatSocketClient, chat_requests

WORLD = re.compile(r"<world_info>\n(.*?)\n</world_info>", re.DOTALL)


def persona_with_book(client, entries: list[dict], name: str = "Mira", language: str = "en",
                      **book) -> dict:
    """A new persona whose own book holds `entries` (REST bodies); returns `{persona, book}`."""
    persona = client.post("/api/personas", json={"name": name, "language": language}).get_json()
    response = client.post("/api/world-books", json={"persona_id": persona["id"], **book})
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    for entry in entries:
        added = client.post(f"/api/world-books/{created['id']}/entries", json=entry)
        assert added.status_code == 201, added.get_json()
    return {"persona": persona, "book": client.get(f"/api/world-books/{created['id']}")
            .get_json()}


class Conversation:
    """One session of a persona, driven over the WebSocket."""

    def __init__(self, server, client, claude, persona: dict):
        self.client, self.claude = client, claude
        self.session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
        self.ws = ChatSocketClient(server.ws_url)

    def say(self, message: str) -> dict:
        """Sends a message; returns the `done` event (fails on an `error` one)."""
        events = self.ws.chat(self.session["id"], message)
        assert events[-1]["type"] == "done", events[-1]
        return events[-1]

    def request(self):
        """The last chat request the fake received."""
        return chat_requests(self.claude)[-1]

    def fired(self) -> list[str]:
        """The world info texts of the last request, in prompt order ([] for none)."""
        return world_lines(self.request())

    def reply(self, message_id: int) -> dict:
        """A stored message as the REST API shows it."""
        return self.client.get(f"/api/sessions/{self.session['id']}/messages/{message_id}") \
            .get_json()

    def close(self) -> None:
        """Closes the socket."""
        self.ws.close()


def split_system(request) -> tuple[str, str]:
    """`(cached prefix, everything after it)` of a recorded request, for either provider: the
    Anthropic blocks up to the one with `cache_control`, or the OpenAI system text's first
    paragraph block up to the world info / time that follow it."""
    system = request.system
    if isinstance(system, list):
        marks = [i for i, block in enumerate(system) if "cache_control" in block]
        assert len(marks) == 1, system
        cut = marks[0] + 1
        return ("\n\n".join(b["text"] for b in system[:cut]),
                "\n\n".join(b["text"] for b in system[cut:]))
    head, _, tail = system.rpartition("\n\n")
    match = re.search(r"\n\n## (World info|Weltwissen)\n", head)
    if match:
        return head[:match.start()], head[match.start() + 2:] + "\n\n" + tail
    return head, tail


def world_lines(request) -> list[str]:
    """The entries in the request's world info section, one per line."""
    _, rest = split_system(request)
    match = WORLD.search(rest)
    return match.group(1).split("\n") if match else []
