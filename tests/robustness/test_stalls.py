"""No upload or heavy read stalls a worker (issue 21): one gevent worker of the real server model
(`python -m src.app`, PERSONA_WORKERS=1) serves five hostile uploads of a heavy kind at once
(or five reads that compute: memory notes and history diffs of a persona whose updates wrote
repetitive memories up to the hard cap, archive exports of a 20,000-message persona)
while `/healthz` is polled and a chat streams over SSE from the Claude fake (in a process of
its own: `paced_fake.py`). The worst `/healthz` answer and the worst gap between chunks beyond
the fake's own pace stay within STALL_SECONDS, and gevent's blocking monitor (PERSONA_BLOCKING_REPORT) saw no
block of the event loop that computed or slept in a system call for more than STALL_SECONDS
(blocks are judged net of the worker's waits for a CPU or the disk, so a loaded machine cannot
fail this; docs/development.md).
"""
import pytest

from tests.robustness.hostile_uploads import (
    many_entry_zip,
    persona_archive,
    repetitive_memory,
    upload,
    zero_card_png,
    zero_png,
)
from tests.robustness.paced_fake import PacedFake
from tests.robustness.servers import ServerProcess
from tests.robustness.stall_watch import (
    blocks,
    stalling_blocks,
    watch,
    where,
)

KEY = "sk-ant-stalls-test-000000000000"
STALL_SECONDS = 0.5
PARALLEL = 5
MEMORY_LINES = 7000  # two such memories take difflib seconds to compare (hostile_uploads.py)


@pytest.fixture(scope="module")
def fake():
    with PacedFake() as paced:
        yield paced


@pytest.fixture(scope="module")
def server(fake, tmp_path_factory):
    data = tmp_path_factory.mktemp("stalls")
    with ServerProcess(data / "data", data / "server.log", PERSONA_WORKERS="1",
                       ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url) as proc:
        history = persona_archive(20_000, words=120)  # a 15 MB database to back up
        assert upload(proc.port, "/api/personas/import", history)[0] == 201
        yield proc


@pytest.fixture(scope="module")
def history_id(server) -> str:
    """The 20,000-message persona the server fixture imported."""
    personas = server.call("GET", "/api/personas")[2]["personas"]
    return next(p["id"] for p in personas if p["name"] == "Archived")


@pytest.fixture(scope="module")
def repetitive(server) -> dict:
    """A persona (restored from an archive, as a real one can be) whose two updates of one
    session wrote repetitive memories near the hard cap: `{persona_id, session_id, rev}`, `rev`
    the second update's revision of memory.md (diffed against the first)."""
    archive = persona_archive(4, revisions=(repetitive_memory(MEMORY_LINES, 1),
                                            repetitive_memory(MEMORY_LINES, 7)))
    status, persona = upload(server.port, "/api/personas/import", archive)
    assert status == 201, persona
    pid = persona["id"]
    session = server.call("GET", f"/api/sessions?persona_id={pid}")[2]["sessions"][0]
    newest = server.call("GET", f"/api/personas/{pid}/cortex/memory.md/history")[2][
        "revisions"][0]
    assert newest["author"] == "ai", newest
    notes = server.call("GET", f"/api/sessions/{session['id']}/memory-notes", timeout=300)[2]
    assert [f["rev"] for n in notes["notes"] for f in n["files"]] == [newest["rev"] - 1,
                                                                      newest["rev"]], notes
    return {"persona_id": pid, "session_id": session["id"], "rev": newest["rev"]}


@pytest.fixture(scope="module")
def files():
    return {"zero_card": zero_card_png(), "zero_png": zero_png(6000, 6000),
            "at_cap": zero_png(4096, 4096), "many_entries": many_entry_zip(),
            "long_archive": persona_archive(150_000, broken_last=True)}


def _session(server) -> tuple[str, str]:
    persona = server.call("POST", "/api/personas", {"name": "Mia"})[2]
    session = server.call("POST", "/api/sessions", {"persona_id": persona["id"]})[2]
    return persona["id"], session["id"]


def _requests(server, files, kind: str, persona_id: str) -> tuple[list, set]:
    """PARALLEL calls of one kind (each returns its status) and the statuses allowed."""
    port, avatar = server.port, f"/api/personas/{persona_id}/avatar"
    calls = {
        "card_import": (lambda: upload(port, "/api/personas/import", files["zero_card"]), {413}),
        "avatar": (lambda: upload(port, avatar, files["zero_png"], "PUT"), {413}),
        "avatar_at_cap": (lambda: upload(port, avatar, files["at_cap"], "PUT"), {200, 503}),
        "zip_entries": (lambda: upload(port, "/api/personas/import", files["many_entries"]),
                        {413}),
        "archive_restore": (lambda: upload(port, "/api/personas/import",
                                           files["long_archive"]), {400, 503}),
        "backup": (lambda: (server.call("GET", "/api/backup", raw=True, timeout=300)[0], {}),
                   {200, 503}),
    }
    call, allowed = calls[kind]
    return [lambda: call()[0] for _ in range(PARALLEL)], allowed


def _reads(server, kind: str, target) -> tuple[list, set]:
    """PARALLEL reads of one kind: `target` is the `repetitive` persona or the history's id."""
    paths = {
        "memory_notes": lambda: f"/api/sessions/{target['session_id']}/memory-notes",
        "history_diff": lambda: (f"/api/personas/{target['persona_id']}/cortex/memory.md/"
                                 f"history/{target['rev']}"),
        "archive_export": lambda: (f"/api/personas/{target}/export?format=archive"
                                   "&include_memories=1"),
    }
    allowed = {"memory_notes": {200}, "history_diff": {200, 503}, "archive_export": {200, 503}}
    path = paths[kind]()
    return [lambda: server.call("GET", path, raw=True, timeout=300)[0]
            for _ in range(PARALLEL)], allowed[kind]


_UPLOADS = ["card_import", "avatar", "avatar_at_cap", "zip_entries", "archive_restore", "backup"]
_READS = {"memory_notes": "repetitive", "history_diff": "repetitive",
          "archive_export": "history_id"}


@pytest.mark.parametrize("kind", [*_UPLOADS, *_READS])
def test_heavy_requests_do_not_stall_the_worker(server, fake, files, kind, request):
    persona_id, session_id = _session(server)
    target = request.getfixturevalue(_READS[kind]) if kind in _READS else None
    since = server.blocking_report.stat().st_size if server.blocking_report.exists() else 0
    requests, allowed = _reads(server, kind, target) if kind in _READS else \
        _requests(server, files, kind, persona_id)
    stalls = watch(server, fake.pid, session_id, requests)
    print(f"\n{kind}: {stalls.summary()}")
    for block in blocks(server.blocking_report, since):
        print(f"  block {block['wall']} s wall, {block['cpu']} s CPU, {block.get('stalled')} s "
              f"stalled at {where(block)}")
    assert set(stalls.statuses) <= allowed, stalls.summary()
    assert stalls.worst_healthz <= STALL_SECONDS, stalls.summary()
    assert stalls.worst_extra_gap <= STALL_SECONDS, stalls.summary()
    assert stalling_blocks(server.blocking_report, since, STALL_SECONDS) == []
