"""Helpers for the cortex update and trigger tests (real SQLite, files, SDK, fake); their
fixtures (`app_config` with the Claude fake, `env`) are in tests/cortex/conftest.py and
tests/conftest.py."""
import sqlite3
from contextlib import closing

from src.app import create_app
from src.utils import provider
from src.utils.models.cortex import CortexJob
from src.utils.storage import cortex_jobs as jobs
from src.utils.storage.messages import add_message
from src.utils.storage.personas import create_persona
from src.utils.storage.sessions import create_session
from src.utils.storage.settings import set_setting

KEY = "sk-test-cortex-0000"
PID = "anna0001"
OTHER = "bert0002"


class Env:
    """Quick access to the app's services and to rows in its database."""

    def __init__(self, app):
        self.app = app
        self.db = provider.get_db(app)
        self.cortex = provider.get_cortex_service(app)
        self.update = provider.get_update_service(app)
        self.trigger = provider.get_cortex_trigger(app)
        self.worker = provider.get_cortex_worker(app)
        self._sessions = 0

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self.db.conn()

    def persona(self, pid: str = PID, name: str = "Mira", user_name: str = "Jonas",
                language: str = "en") -> str:
        """Creates a persona row and its cortex files."""
        create_persona(self.conn, pid, {"name": name, "user_name": user_name,
                                        "language": language, "description": "A warm friend."})
        self.cortex.ensure_cortex_files(pid)
        return pid

    def session(self, pid: str = PID, title: str = "") -> str:
        """Creates a session of persona `pid`; returns its id."""
        self._sessions += 1
        sid = f"s{self._sessions:03d}{pid}"
        create_session(self.conn, sid, pid, title)
        return sid

    def say(self, sid: str, *texts: str) -> list[dict]:
        """Stores alternating user/assistant messages (starting with the user)."""
        return [add_message(self.conn, sid, "user" if i % 2 == 0 else "assistant", text)
                for i, text in enumerate(texts)]

    def chat(self, sid: str, n: int, prefix: str = "m") -> list[dict]:
        """Stores `n` alternating messages `<prefix>0`, `<prefix>1`, ..."""
        return self.say(sid, *(f"{prefix}{i}" for i in range(n)))

    def settings(self, key: str, value) -> None:
        """Stores a setting (e.g. "cortex" or "app")."""
        set_setting(self.conn, key, value)

    def write(self, filename: str, content: str, pid: str = PID, author: str = "user") -> int:
        """Writes a cortex file as the person would."""
        return self.cortex.write_file(pid, filename, content, author=author)

    def read(self, filename: str, pid: str = PID) -> str:
        """The file's current content."""
        return self.cortex.read_file_info(pid, filename).content

    def revisions(self, pid: str = PID, filename: str | None = None) -> list[dict]:
        """Committed revisions, oldest first."""
        sql = "SELECT * FROM cortex_revisions WHERE persona_id = ? AND committed = 1"
        params: list = [pid]
        if filename:
            sql += " AND filename = ?"
            params.append(filename)
        return [dict(r) for r in self.conn.execute(sql + " ORDER BY id", params)]

    def processed(self, pid: str = PID) -> int:
        """The last processed message id."""
        return jobs.last_processed_id(self.conn, pid)

    def run_job(self, pid: str = PID) -> CortexJob:
        """Queues an update on demand and runs it in this thread; returns the finished job."""
        job, _ = self.trigger.request_update(pid)
        finished = {j.id: j for j in self.worker.run_pending()}
        return finished[job.id]


def tool_results(request) -> list[dict]:
    """The tool_result blocks of the last user turn of a recorded request."""
    content = request.messages[-1]["content"]
    return [block for block in content if block.get("type") == "tool_result"]


def result_text(block: dict) -> str:
    """A tool_result's text (string or list-of-blocks content)."""
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def prompt_text(request) -> str:
    """The first user message of a recorded request (files and conversation)."""
    content = request.messages[0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def system_text(request) -> str:
    """The system prompt of a recorded request as one string."""
    system = request.system
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system or [])


def db_rows(data_dir, sql: str, *params) -> list[dict]:
    """Rows read through a separate connection (what another process would see)."""
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql, params)]


def second_app(app_config: dict):
    """Another app on the same data directory, as after a restart."""
    return create_app(dict(app_config))
