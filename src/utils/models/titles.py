"""Queued session titles (storage/title_jobs.py) as the title generator reads them: never an
answer of the API (a title reaches clients as the session it names)."""
from typing import Literal

from .resource import Resource


class TitleJob(Resource):
    """One queued, running or finished request to name a session: the two texts the title is
    written from, and who holds it (`owner`, a process token, until `lease_until`, epoch s)."""

    id: str
    session_id: str
    user_text: str
    reply_text: str
    status: Literal["queued", "running", "done", "failed"]
    owner: str | None
    lease_until: float | None
    error: str | None
    created_at: str
    finished_at: str | None


class SessionTitled(Resource):
    """A request that named its session: the request's id (`job_id`), the session's (`id`),
    the title, and when the request finished."""

    job_id: str
    id: str
    title: str | None
    finished_at: str
