"""A person's PUTs racing an update's edit_file in another process: no edit is lost."""
import os
from concurrent.futures import ThreadPoolExecutor

from src.utils import provider
from tests.cortex.support import Lines, spawn
from tests.support.flocks import held, lock_path, wait_for_waiters

FILE = "/api/personas/default/cortex/memory.md"
ROUNDS = 12


def _put_until_stored(client, body: dict, etag: str, line: str) -> int:
    """PUTs `line` appended to the view `body`/`etag`; on 412 appends it to the current file the
    answer carries, as the editor's merge view lets a person do. The first answer's status."""
    first = None
    while True:
        response = client.put(FILE, json={"content": body["content"] + line},
                              headers={"If-Match": etag})
        first = first or response.status_code
        if response.status_code == 200:
            return first
        assert response.status_code == 412
        body, etag = response.get_json()["error"]["current"], response.headers["ETag"]
        assert etag == f'"{body["revision"]}"'


def _queued(start, fd: int, waiting: int, *args):
    """Starts a writer (`start(*args)`) and returns what that returned once `waiting` writers
    are blocked on the lock the test holds on `fd`."""
    started = start(*args)
    wait_for_waiters(os.fstat(fd).st_ino, waiting)
    return started


def test_put_races_edit_file_from_another_process(app, client, data_dir):
    """The overlap is built, not hoped for: each round the test holds the persona's lock until
    the other process's edit_file and the person's PUT (based on the view before that edit) are
    both waiting for it (the kernel lists two blocked flocks), then lets them go in whatever
    order the kernel picks. Either order keeps both lines: a PUT first is built on by the edit,
    an edit first turns the stale PUT into a 412 whose retry keeps the edit."""
    start = client.get(FILE).get_json()
    path = lock_path(data_dir, "default")
    person_client = app.test_client()  # its own client: the PUT runs in the person's thread
    with spawn("step", str(data_dir), "default", "update") as editor, \
            ThreadPoolExecutor(1) as person:
        lines = Lines(editor)
        assert lines.next() == "ready"
        for i in range(ROUNDS):
            response = client.get(FILE)
            view, etag = response.get_json(), response.headers["ETag"]
            # who queues first alternates, so both orders run (the kernel tends to wake in order)
            with held(path) as fd:
                if i % 2:
                    put = _queued(person.submit, fd, 1, _put_until_stored, person_client, view,
                                  etag, f"person-{i}\n")
                _queued(editor.stdin.write, fd, 1 + i % 2, b"go\n")
                if not i % 2:
                    put = _queued(person.submit, fd, 2, _put_until_stored, person_client, view,
                                  etag, f"person-{i}\n")
            # released: both writers were in flight at once, waiting for the lock
            assert lines.next().startswith("ok ")
            assert put.result(timeout=30) in (200, 412)
        editor.stdin.close()
        assert lines.until("done")[-1] == "done 0"
    assert editor.returncode == 0

    final = client.get(FILE).get_json()["content"]
    assert final.startswith(start["content"])
    for line in [f"person-{i}" for i in range(ROUNDS)] + [f"update-{i}" for i in range(ROUNDS)]:
        assert final.count(line + "\n") == 1, f"{line} was lost or doubled"
    history = client.get(FILE + "/history").get_json()["revisions"]
    by_author = [r["author"] for r in history]
    assert by_author.count("user") == ROUNDS and by_author.count("ai") == ROUNDS
    assert "external" not in by_author
    assert provider.get_cortex_service().read_file("default", "memory.md") == final


def test_put_based_on_a_view_older_than_an_update_gets_412(app, client, data_dir):
    seen = client.get(FILE)
    with spawn("edit", str(data_dir), "default", "update", "1") as editor:
        lines = Lines(editor)
        assert lines.next() == "ready"
        editor.stdin.write(b"go\n")
        lines.until("done")
    response = client.put(FILE, json={"content": "the person's text\n"},
                          headers={"If-Match": seen.headers["ETag"]})
    assert response.status_code == 412
    current = response.get_json()["error"]["current"]
    assert current["content"] == seen.get_json()["content"] + "update-0\n"
    assert client.get(FILE).get_json() == current
