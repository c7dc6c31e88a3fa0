"""The cortex routes (and a book's attachment) read their JSON bodies through their models
(DESIGN §15): an unknown key is `400 unknown_field`, a value of the wrong type `400
validation_error`, each naming the field, and nothing changes. They accepted any object before and
ignored what they did not read; the PUT of a file answered a bad `content` without naming it."""
import pytest

from src.utils import provider

PERSONA = "/api/personas/default"
FILE = PERSONA + "/cortex/memory.md"
PROPOSAL = PERSONA + "/cortex/proposals/" + "0" * 32


def _state(client) -> tuple:
    """Everything these requests could change: the files, the revisions, the jobs, the books."""
    db = provider.get_db().conn()
    counts = tuple(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                   for table in ("cortex_revisions", "cortex_jobs", "persona_world_books"))
    return client.get(PERSONA + "/cortex").get_json()["files"], counts


def _refused(client, method: str, url: str, body, code: str, field: str, **headers) -> None:
    before = _state(client)
    response = client.open(url, method=method, json=body, headers=headers)
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["code"] == code
    assert response.get_json()["error"]["field"] == field
    assert _state(client) == before


def _etag(client) -> str:
    return client.get(FILE).headers["ETag"]


@pytest.mark.parametrize("body,code,field", [
    ({"content": "new text", "revision": 3}, "unknown_field", "revision"),
    ({"content": 5}, "validation_error", "content"),
    ({"content": None}, "validation_error", "content"),
    ({}, "validation_error", "content"),
])
def test_a_file_put_names_the_field_at_fault(client, body, code, field):
    _refused(client, "PUT", FILE, body, code, field, **{"If-Match": _etag(client)})


@pytest.mark.parametrize("path", [FILE + "/reset", FILE + "/history/1/restore",
                                  PERSONA + "/cortex/update", PERSONA + "/cortex/consolidate"])
def test_actions_without_fields_refuse_any_field(client, path):
    _refused(client, "POST", path, {"force": True}, "unknown_field", "force")


@pytest.mark.parametrize("path", [FILE + "/reset", PERSONA + "/cortex/update"])
@pytest.mark.parametrize("kwargs", [{}, {"json": {}}])
def test_actions_without_fields_take_no_body_or_an_empty_object(client, path, kwargs):
    assert client.post(path, **kwargs).status_code in (200, 202)


@pytest.mark.parametrize("url,body,code,field", [
    (PROPOSAL + "/accept", {"filename": "notes.md"}, "validation_error", "filename"),
    (PROPOSAL + "/accept", {"filename": "memory.md", "content": ["x"]}, "validation_error",
     "content"),
    (PROPOSAL + "/accept", {"filenames": ["memory.md"]}, "unknown_field", "filenames"),
    (PROPOSAL + "/reject", {"filename": 1}, "validation_error", "filename"),
    (PERSONA + "/cortex/memory.md/archive/1/restore", {"text": 5}, "validation_error", "text"),
    (PERSONA + "/cortex/memory.md/archive/1/restore", {"part": "x"}, "unknown_field", "part"),
])
def test_review_and_archive_bodies_name_the_field_at_fault(client, url, body, code, field):
    _refused(client, "POST", url, body, code, field)


def test_attaching_a_book_refuses_any_field(client):
    book = client.post("/api/world-books", json={"name": "Coast"}).get_json()
    url = f"{PERSONA}/world-books/{book['id']}"
    _refused(client, "PUT", url, {"order": 1}, "unknown_field", "order")
    assert client.put(url, json={}).status_code == 200
    assert [b["id"] for b in client.get(PERSONA + "/world-books").get_json()["books"]] == [
        book["id"]]
