"""Two people creating the same persona's own book at the same moment (docs/world-info.md): the
first gets it (201), the other a clear 409 `book_exists`, never a 500 from the unique index, and
one book exists. Two clients over real HTTP are released together by a barrier, several times."""
import json
import threading
import urllib.error
import urllib.request

from tests.support.concurrency import run_all

ROUNDS = 10


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def _race(url: str, pid: str) -> list[tuple[int, dict]]:
    """Two creates of `pid`'s own book, released together."""
    barrier, answers = threading.Barrier(2), []

    def create() -> None:
        barrier.wait(timeout=30)
        answers.append(_post(f"{url}/api/world-books", {"persona_id": pid}))
    run_all([(create,), (create,)])
    return answers


def test_racing_creates_of_an_own_book_give_one_book_and_a_409(server, client):
    for _ in range(ROUNDS):
        pid = client.post("/api/personas", json={"name": "Ada"}).get_json()["id"]
        answers = _race(server.url, pid)
        assert sorted(status for status, _ in answers) == [201, 409], answers
        made = next(body for status, body in answers if status == 201)
        refused = next(body for status, body in answers if status == 409)
        assert refused["error"]["code"] == "book_exists"
        books = client.get(f"/api/personas/{pid}/world-books").get_json()["books"]
        assert [book["id"] for book in books] == [made["id"]]
