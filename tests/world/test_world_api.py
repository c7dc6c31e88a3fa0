"""The world info REST API (docs/world-info.md): books, entries and attachments; hostile input
gets a clear JSON 4xx and writes nothing."""
import json

import pytest


@pytest.fixture
def book(client):
    """A shared book with one entry, attached to the default persona."""
    made = client.post("/api/world-books", json={"name": "Coast"}).get_json()
    client.post(f"/api/world-books/{made['id']}/entries", json={"keys": ["lamp"],
                                                                "content": "Old lamp."})
    client.put(f"/api/personas/default/world-books/{made['id']}")
    return client.get(f"/api/world-books/{made['id']}").get_json()


def _state(client) -> str:
    books = client.get("/api/world-books").get_json()["books"]
    full = [client.get(f"/api/world-books/{b['id']}").get_json() for b in books]
    return json.dumps(full, sort_keys=True)


def test_books_and_entries_are_created_read_changed_and_deleted(client, book):
    assert book["name"] == "Coast" and book["personas"] == ["default"]
    assert book["scan_depth"] == 2 and book["token_budget"] == 2048
    assert book["recursive_scanning"] is False
    entry = book["entries"][0]
    assert entry == {"id": entry["id"], "book_id": book["id"], "keys": ["lamp"],
                     "secondary_keys": [], "content": "Old lamp.", "comment": "",
                     "enabled": True, "constant": False, "selective": False,
                     "selective_logic": "and_any", "insertion_order": 100,
                     "position": "before_char", "case_sensitive": False,
                     "match_whole_words": True}
    url = f"/api/world-books/{book['id']}/entries/{entry['id']}"
    changed = client.patch(url, json={"enabled": False, "insertion_order": 7}).get_json()
    assert changed["enabled"] is False and changed["insertion_order"] == 7
    assert changed["content"] == "Old lamp."
    assert client.delete(url).get_json() == {"id": entry["id"], "deleted": True}
    assert client.patch(url, json={"enabled": True}).status_code == 404
    assert client.delete(f"/api/personas/default/world-books/{book['id']}").get_json() == \
        {"books": []}
    assert client.delete(f"/api/world-books/{book['id']}").status_code == 200
    assert client.get(f"/api/world-books/{book['id']}").status_code == 404


def test_a_persona_has_at_most_one_own_book_and_it_goes_with_the_persona(client):
    pid = client.post("/api/personas", json={"name": "Ada"}).get_json()["id"]
    own = client.post("/api/world-books", json={"persona_id": pid}).get_json()
    assert own["persona_id"] == pid and own["personas"] == [pid]
    again = client.post("/api/world-books", json={"persona_id": pid})
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "book_exists"
    assert client.delete(f"/api/personas/{pid}").status_code == 200
    assert client.get(f"/api/world-books/{own['id']}").status_code == 404


@pytest.mark.parametrize(("path", "method", "body", "status"), [
    ("entries", "post", {"keys": ["a"], "content": "x\ud800y"}, 400),
    ("entries", "post", {"keys": ["a\x07"], "content": "x"}, 400),
    ("entries", "post", {"keys": ["a\nb"], "content": "x"}, 400),
    ("entries", "post", {"keys": "lamp", "content": "x"}, 400),
    ("entries", "post", {"keys": [3], "content": "x"}, 400),
    ("entries", "post", {"content": 5}, 400),
    ("entries", "post", {"content": "x", "constant": "yes"}, 400),
    ("entries", "post", {"content": "x", "insertion_order": 1.5}, 400),
    ("entries", "post", {"content": "x", "insertion_order": True}, 400),
    ("entries", "post", {"content": "x", "position": "at_depth"}, 400),
    ("entries", "post", {"content": "x", "selective_logic": 2}, 400),
    ("entries", "post", {"content": "x", "id": 4}, 400),
    ("entries", "post", {"content": "x" * 20001}, 400),
    ("entries", "post", {"keys": ["k"] * 65}, 400),
    ("entry", "patch", {"content": "\x00"}, 400),
    ("entry", "patch", {"enabled": None}, 400),
    ("book", "patch", {"scan_depth": -1}, 400),
    ("book", "patch", {"scan_depth": 1001}, 400),
    ("book", "patch", {"token_budget": 0}, 400),
    ("book", "patch", {"recursive_scanning": 1}, 400),
    ("book", "patch", {"name": "a\nb"}, 400),
    ("book", "patch", {"name": "\udfff"}, 400),
    ("book", "patch", {"entries": []}, 400),
    ("books", "post", {"persona_id": 12}, 400),
    ("books", "post", {"persona_id": "../../etc"}, 404),
    ("books", "post", {"name": ["x"]}, 400),
])
def test_hostile_bodies_get_a_clear_4xx_and_change_nothing(client, book, path, method, body,
                                                           status):
    urls = {"entries": f"/api/world-books/{book['id']}/entries",
            "entry": f"/api/world-books/{book['id']}/entries/{book['entries'][0]['id']}",
            "book": f"/api/world-books/{book['id']}", "books": "/api/world-books"}
    before = _state(client)
    raw = json.dumps(body)
    response = getattr(client, method)(urls[path], data=raw, content_type="application/json")
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] and error["message"]
    assert _state(client) == before


@pytest.mark.parametrize("raw", [b"[]", b"\"text\"", b"{bad json", b"null",
                                 json.dumps({"content": "x" * (10 * 1024 * 1024)}).encode()])
def test_wrong_json_and_huge_bodies_are_refused(client, book, raw):
    before = _state(client)
    response = client.post(f"/api/world-books/{book['id']}/entries", data=raw,
                           content_type="application/json")
    assert response.status_code in (400, 413)
    assert response.get_json()["error"]["code"]
    assert _state(client) == before


def test_unknown_ids_are_404(client, book):
    for url in ("/api/world-books/999", f"/api/world-books/{book['id']}/entries/999",
                f"/api/world-books/{2**70}", "/api/personas/nosuchpersona/world-books"):
        assert client.get(url).status_code in (404, 405)
    assert client.put(f"/api/personas/default/world-books/{2**64}").status_code == 404
    assert client.put("/api/personas/default/world-books/999").status_code == 404
    assert client.delete("/api/personas/default/world-books/999").status_code == 404
    other = client.post("/api/world-books", json={"name": "Other"}).get_json()
    entry = book["entries"][0]["id"]
    assert client.patch(f"/api/world-books/{other['id']}/entries/{entry}",
                        json={"enabled": False}).status_code == 404
    assert client.put(f"/api/personas/default/world-books/{book['id']}",
                      data="x", content_type="text/plain").status_code == 415
