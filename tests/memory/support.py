"""A conversation driven over the real REST API (SSE chat, cortex routes) against the Claude fake,
with the cortex worker run in the test's thread, so each step's effect can be checked in order."""
import json

from src.utils import provider
from src.utils.models.cortex import CortexJob
from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.fakes.claude import replies

USER = "Jonas"
RECONCILE_MARK = "<cortex_retracted>"


def add_line(line: str, after: str = "## Shared experiences\n"):
    """A cortex tool call that inserts `line` under a heading of memory.md (str_replace)."""
    return ("str_replace", {"filename": "memory.md", "old_str": after,
                            "new_str": after + line + "\n"})


def drop_line(line: str):
    """A cortex tool call that removes one line of memory.md."""
    return ("str_replace", {"filename": "memory.md", "old_str": line + "\n", "new_str": ""})


class Conversation:
    """One app under test: personas, sessions, chat turns and memory, all through HTTP routes."""

    def __init__(self, app, client, claude, script):
        self.app, self.client, self.claude, self.script = app, client, claude, script
        self.worker = provider.get_cortex_worker(app)

    def call(self, method: str, path: str, body=None, status: int = 200, headers=None):
        """One JSON request; asserts its status and returns the decoded body."""
        response = self.client.open(path, method=method, json=body, headers=headers or {})
        assert response.status_code == status, (path, response.status_code, response.get_json())
        return response.get_json()

    def persona(self, name: str = "Mira") -> str:
        """A new persona (English, talking to Jonas); its id."""
        return self.call("POST", "/api/personas", {"name": name, "user_name": USER},
                         status=201)["id"]

    def session(self, persona_id: str) -> str:
        """A new session with the persona; its id."""
        return self.call("POST", "/api/sessions", {"persona_id": persona_id}, status=201)["id"]

    def say(self, session_id: str, text: str, reply: str) -> dict:
        """One chat turn over SSE; returns the `done` event's data."""
        self.script.reply(reply)
        response = self.client.post("/api/chat/stream",
                                    json={"session_id": session_id, "message": text})
        events = _events(response.get_data(as_text=True))
        assert events[-1][0] == "done", events
        return events[-1][1]

    def messages(self, session_id: str) -> list[dict]:
        """The active branch, oldest first."""
        return self.call("GET", f"/api/sessions/{session_id}")["messages"]

    def remember(self, persona_id: str, *calls, summary: str = "Noted.") -> dict:
        """An update on demand whose model makes `calls`; runs it and returns the job."""
        self.script.update(replies.tool_use(list(calls)), replies.text(summary))
        job_id = self.call("POST", f"/api/personas/{persona_id}/cortex/update",
                           status=202)["job_id"]
        self.worker.run_pending()
        job = self.job(job_id)
        assert job["status"] == "done", job
        return job

    def run_jobs(self) -> list[CortexJob]:
        """Runs every queued job now (the background worker's pass)."""
        return self.worker.run_pending()

    def job(self, job_id: str) -> dict:
        """A job as `GET /api/cortex/jobs/<id>` shows it."""
        return self.call("GET", f"/api/cortex/jobs/{job_id}")

    def status(self, persona_id: str) -> dict:
        """The memory indicator's status."""
        return self.call("GET", f"/api/personas/{persona_id}/cortex/status")

    def file(self, persona_id: str, filename: str = "memory.md") -> dict:
        """A cortex file (content and revision)."""
        return self.call("GET", f"/api/personas/{persona_id}/cortex/{filename}")

    def memory(self, persona_id: str) -> str:
        """memory.md's text now."""
        return self.file(persona_id)["content"]

    def edit(self, persona_id: str, content: str, filename: str = "memory.md") -> dict:
        """The person saves a file (with If-Match), as the editor does."""
        revision = self.file(persona_id, filename)["revision"]
        return self.call("PUT", f"/api/personas/{persona_id}/cortex/{filename}",
                         {"content": content}, headers={"If-Match": f'"{revision}"'})

    def history(self, persona_id: str, filename: str = "memory.md") -> list[dict]:
        """The file's revisions, newest first."""
        return self.call("GET", f"/api/personas/{persona_id}/cortex/{filename}/history")[
            "revisions"]

    def model_calls(self) -> list:
        """Every upstream request except session titles (background, not memory)."""
        return [r for r in self.claude.requests if r.body.get("max_tokens") != TITLE_MAX_TOKENS]

    def reconcile_calls(self) -> list:
        """The upstream requests of model reconciliations."""
        return [r for r in self.claude.requests if RECONCILE_MARK in json.dumps(r.messages)]


def _events(text: str) -> list[tuple[str, dict]]:
    events, kind = [], None
    for line in text.splitlines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: ") and kind:
            events.append((kind, json.loads(line[6:])))
            kind = None
    return events
