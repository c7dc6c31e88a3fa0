"""Helpers for the browser tests: a scripted model behind the Claude fake, and page actions."""
import threading
from collections import deque

from tests.fakes.claude import replies

READY = "body[data-ready=true]"
LAST_REPLY = "#messages .msg-assistant:last-of-type"
REPLY_DONE = f"{LAST_REPLY} [data-action=regenerate]"


class Model:
    """Routes the fake's requests: streamed chat replies and cortex tool runs each from their own
    queue, titles (and key checks) answered with a fixed text; an empty queue fails the test."""

    def __init__(self):
        self.chat: deque = deque()
        self.update: deque = deque()
        self.chat_bodies: list[dict] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict):
        if body.get("tools"):
            return self.update.popleft()
        if not body.get("stream"):
            return replies.text("A short title")
        with self._lock:
            self.chat_bodies.append(body)
        return self.chat.popleft()


def open_page(page, server, path: str = "/"):
    """Loads a page and waits until its script has finished the first render."""
    page.goto(server.url + path)
    page.wait_for_selector(READY)
    return page


def send(page, text: str) -> None:
    """Types a message and sends it with Enter."""
    page.fill("#composer-input", text)
    page.press("#composer-input", "Enter")


def drop_file(page, selector: str, data: bytes, name: str, mime: str = "image/png") -> None:
    """Drops a file on `selector` the way a person dragging it from their desktop would."""
    transfer = page.evaluate_handle(
        """([bytes, name, mime]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, { type: mime }));
            return transfer;
        }""", [list(data), name, mime])
    for kind in ("dragenter", "dragover", "drop"):
        page.dispatch_event(selector, kind, {"dataTransfer": transfer})


def last_user_text(body: dict) -> str:
    """The text of the last user turn the fake received."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def system_text(body: dict) -> str:
    """The system prompt the fake received, as one string."""
    system = body.get("system") or ""
    if isinstance(system, str):
        return system
    return "\n".join(block.get("text", "") for block in system)
