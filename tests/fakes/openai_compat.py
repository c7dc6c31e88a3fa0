"""FakeOpenAI: a local HTTP server speaking the Chat Completions API, for the real `openai` SDK.

    fake = FakeOpenAI()                      # or the `openai_fake` fixture; fake.url -> base_url
    fake.enqueue(replies.text("Hi"))         # the same reply builders as FakeClaude
    fake.quirks = {"no_index", ...}          # see QUIRKS
    fake.error_style = "ollama"              # openai | ollama | vllm | openrouter
    fake.requests / fake.last / fake.wait_for_requests(n) / fake.disconnects

Routes: POST /v1/chat/completions (JSON or SSE `data:` lines and `data: [DONE]`), GET
/v1/models, GET /props (llama.cpp's context size). Requests are validated like a strict server
(openai_validation.py); an unknown model is a 404. Prefix caching is simulated: a request whose
first message equals an earlier request's reports that part as `cached_tokens`.
"""
import json
import threading

from tests.fakes import replies
from tests.fakes.claude import NOTHING_SCRIPTED, FakeClaude, RecordedRequest
from tests.fakes.openai_validation import problem
from tests.fakes.openai_wire import OpenAIExchange, error_body

__all__ = ["FakeOpenAI", "QUIRKS", "replies"]

MODELS = ("llama3.2:3b", "qwen2.5:7b", "gpt-4o-mini")
QUIRKS = {
    "no_index": "tool-call deltas carry no `index`",
    "reused_index": "every tool call in a stream uses index 0",
    "byte_split": "each SSE line is written in two pieces, cut inside a UTF-8 character",
    "tool_as_text": "tool calls arrive as JSON text in `content`, finish_reason stop",
    "tools_refused": "a request with tools is refused with 400 (as Ollama does)",
    "no_usage": "no usage, even when stream_options.include_usage asks for it",
    "no_done": "the stream ends without `data: [DONE]`",
    "garbage_lines": "non-JSON `data:` lines inside the stream",
    "html": "every completion is answered 200 text/html (a base URL that is not an API)",
    "endless": "the stream sends text forever and never finishes",
    "huge": "the answer is 20 MB",
    "no_json_mode": "response_format is refused with 400",
}


class OpenAIRecord(RecordedRequest):
    """A recorded request read like FakeClaude's: `system` is the leading system message's
    content, `messages` the history after it, so tests can assert on either provider alike."""

    @property
    def messages(self) -> list:
        messages = self.body.get("messages") or []
        return messages[1:] if messages and messages[0].get("role") == "system" else messages

    @property
    def system(self):
        messages = self.body.get("messages") or []
        return messages[0]["content"] if messages and messages[0].get("role") == "system" else None


class FakeOpenAI(FakeClaude):
    """Chat Completions on 127.0.0.1:<free port>/v1; `api_key` makes any other key a 401."""

    record_type = OpenAIRecord

    def __init__(self, validate: bool = True, api_key: str | None = None,
                 models=MODELS, context_window: int | None = 8192):
        super().__init__(validate=validate, api_key=api_key)
        self.url = f"{self.url}/v1"
        self.models = list(models)
        self.context_window = context_window
        self.quirks: set[str] = set()
        self.error_style = "openai"
        self._prefixes: set[str] = set()
        self._prefix_lock = threading.Lock()

    def _route(self, ex, record) -> None:
        route = (ex.method, ex.path)
        if route == ("POST", "/v1/chat/completions"):
            self._completions(ex, record)
        elif route == ("GET", "/v1/models"):
            if not self._unauthorised(ex, record):
                ex.send_json(200, {"object": "list", "data": [
                    {"id": name, "object": "model", "owned_by": "fake", "created": 0}
                    for name in self.models]})
        elif route == ("GET", "/props") and self.context_window:
            ex.send_json(200, {"default_generation_settings": {"n_ctx": self.context_window}})
        else:
            record.rejected = f"fake: no route {ex.method} {ex.path}"
            ex.send_json(404, error_body(self.error_style, 404, "Not Found"))

    def _unauthorised(self, ex, record) -> bool:
        bearer = ex.headers.get("authorization", "")
        if self.api_key is None or bearer == f"Bearer {self.api_key}":
            return False
        record.rejected = "invalid api key"
        ex.send_json(401, error_body(self.error_style, 401, "Incorrect API key provided."))
        return True

    def _refused(self, ex, record) -> bool:
        body = ex.body
        if self._unauthorised(ex, record):
            return True
        message = problem(body) if self.validate else None
        status = 400
        if message is None and body.get("model") not in self.models:
            status, message = 404, f"model \"{body.get('model')}\" not found, try pulling it first"
        elif message is None and body.get("tools") and "tools_refused" in self.quirks:
            message = f"registry.ollama.ai/library/{body['model']} does not support tools"
        elif message is None and body.get("response_format") and "no_json_mode" in self.quirks:
            message = "response_format is not supported"
        if message is None:
            return False
        record.rejected = message
        ex.send_json(status, error_body(self.error_style, status, message))
        return True

    def _completions(self, ex, record) -> None:
        if self._refused(ex, record):
            return
        if "html" in self.quirks:
            page = b"<!doctype html><html><body>Welcome to the router</body></html>"
            ex._head(200, {"Content-Type": "text/html", "Content-Length": str(len(page))})
            ex._send(page)
            return
        if "endless" in self.quirks or "huge" in self.quirks:
            self._flood(ex)
            return
        with self._cond:
            reply = self._queue.popleft() if self._queue else self.default
        reply = replies.text(reply) if isinstance(reply, str) else reply
        if reply is None:
            record.rejected = NOTHING_SCRIPTED
            ex.send_json(500, error_body(self.error_style, 500, NOTHING_SCRIPTED))
            return
        reply.serve(OpenAIExchange(ex, self, self._usage(ex.body)))

    def _usage(self, body: dict) -> dict:
        messages = body["messages"]
        prompt = max(1, len(json.dumps(messages)) // 4)
        first = json.dumps(messages[0], sort_keys=True) if len(messages) > 1 else None
        cached = 0
        with self._prefix_lock:
            if first is not None and first in self._prefixes:
                cached = len(messages[0].get("content") or "") // 4
            elif first is not None:
                self._prefixes.add(first)
        return {"prompt": prompt, "cached": cached}

    def _flood(self, ex) -> None:
        piece = "x" * 4096
        chunk = {"id": "chatcmpl-flood", "object": "chat.completion.chunk", "created": 0,
                 "model": ex.model, "choices": [{"index": 0, "delta": {"content": piece},
                                                 "finish_reason": None}]}
        if not ex.stream:
            body = {"id": "c", "object": "chat.completion", "created": 0, "model": ex.model,
                    "choices": [{"index": 0, "message": {"role": "assistant",
                                                         "content": "x" * 20_000_000},
                                 "finish_reason": "stop"}]}
            ex.send_json(200, body)
            return
        line = b"data: " + json.dumps(chunk).encode() + b"\n\n"
        ex.start_stream()
        sent = 0
        while ex.write(line):
            sent += len(line)
            if "huge" in self.quirks and sent > 20_000_000:
                ex.end_stream()
                return
