"""The cortex REST API: files with ETag/If-Match, history, diff, restore, reset, settings."""
import pytest

from src.utils import provider
from src.utils.storage.settings import get_setting, set_setting

URL = "/api/personas/default/cortex"
FILE = URL + "/memory.md"
CUSTOM = "abcd1234"


@pytest.fixture
def app_config(app_config):
    return {**app_config, "CORTEX_BUDGET": 100}


def add_persona(pid: str) -> None:
    provider.get_db().conn().execute(
        "INSERT INTO personas (id, name, created_at, updated_at) VALUES (?, 'Test', "
        "'2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')", (pid,))


def revisions() -> int:
    return provider.get_db().conn().execute("SELECT COUNT(*) FROM cortex_revisions").fetchone()[0]


def put(client, content, etag=None, url=FILE):
    headers = {"If-Match": etag} if etag is not None else {}
    return client.put(url, json={"content": content}, headers=headers)


def test_default_cortex_exists_at_start_up(app, data_dir):
    for name in ("memory.md", "soul.md", "relationship.md"):
        assert (data_dir / "cortex" / "default" / name).is_file()


def test_read_all_files(client):
    body = client.get(URL).get_json()
    assert body["persona_id"] == "default"
    assert (body["budget"], body["hard_cap"]) == (100, 400)
    assert [f["filename"] for f in body["files"]] == ["memory.md", "soul.md", "relationship.md"]
    for item in body["files"]:
        assert set(item) == {"filename", "content", "revision", "chars", "budget", "version"}
        assert item["chars"] == len(item["content"]) and item["budget"] == 100


def test_get_file_has_etag_and_supports_if_none_match(client):
    response = client.get(FILE)
    body = response.get_json()
    assert response.headers["ETag"] == f'"{body["revision"]}"'
    assert body["content"].startswith("# Memories")
    again = client.get(FILE, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


def test_put_needs_if_match(client, data_dir):
    before, count = (data_dir / "cortex/default/memory.md").read_text(), revisions()
    response = put(client, "new")
    assert response.status_code == 428
    assert response.get_json()["error"]["code"] == "precondition_required"
    assert (data_dir / "cortex/default/memory.md").read_text() == before
    assert revisions() == count


def test_put_saves_a_user_revision(client, data_dir):
    etag = client.get(FILE).headers["ETag"]
    response = put(client, "Ada likes tea.\n", etag)
    body = response.get_json()
    assert response.status_code == 200
    assert body["content"] == "Ada likes tea.\n" and body["chars"] == 15
    assert response.headers["ETag"] == f'"{body["revision"]}"' != etag
    assert (data_dir / "cortex/default/memory.md").read_text() == "Ada likes tea.\n"
    newest = client.get(FILE + "/history").get_json()["revisions"][0]
    assert (newest["rev"], newest["author"]) == (body["revision"], "user")
    same = put(client, "Ada likes tea.\n", response.headers["ETag"])
    assert same.get_json()["revision"] == body["revision"]


def test_stale_put_gets_412_with_the_current_file(client, data_dir):
    etag = client.get(FILE).headers["ETag"]
    fresh = put(client, "first\n", etag).get_json()
    count = revisions()
    response = put(client, "second\n", etag)
    assert response.status_code == 412
    error = response.get_json()["error"]
    assert error["code"] == "revision_conflict"
    assert error["current"] == fresh
    assert response.headers["ETag"] == f'"{fresh["revision"]}"'
    assert (data_dir / "cortex/default/memory.md").read_text() == "first\n"
    assert revisions() == count


@pytest.mark.parametrize("header,status", [
    ('"abc"', 412), ('W/"1"', 412), ("1", 412), ('"1", "2"', 400), ("*", 200)])
def test_if_match_forms(client, header, status):
    client.get(FILE)
    assert put(client, "x\n", header).status_code == status


def test_external_edit_makes_an_old_etag_stale(client, data_dir):
    etag = client.get(FILE).headers["ETag"]
    (data_dir / "cortex/default/memory.md").write_text("edited in an editor\n")
    response = put(client, "from the browser\n", etag)
    assert response.status_code == 412
    assert response.get_json()["error"]["current"]["content"] == "edited in an editor\n"
    history = client.get(FILE + "/history").get_json()["revisions"]
    assert history[0]["author"] == "external"


@pytest.mark.parametrize("body,kwargs,status", [
    ({"content": 5}, {}, 400), ({"content": None}, {}, 400), ({}, {}, 400),
    ({"content": ["x"]}, {}, 400), (None, {"data": "content=x"}, 415),
    (None, {"data": "not json", "content_type": "application/json"}, 400),
    (None, {"json": ["x"]}, 400), ({"content": "x" * 401}, {}, 413),
    ({"content": "bad \ud800"}, {}, 400),
])
def test_bad_put_bodies_write_nothing(client, data_dir, body, kwargs, status):
    etag = client.get(FILE).headers["ETag"]
    before, count = (data_dir / "cortex/default/memory.md").read_bytes(), revisions()
    if body is not None:
        kwargs = {"json": body}
    response = client.put(FILE, headers={"If-Match": etag}, **kwargs)
    assert response.status_code == status
    assert response.is_json and "error" in response.get_json()
    assert (data_dir / "cortex/default/memory.md").read_bytes() == before
    assert revisions() == count


def test_budget_meter_and_hard_cap(client):
    etag = client.get(FILE).headers["ETag"]
    over_budget = put(client, "b" * 400, etag)
    assert over_budget.status_code == 200
    assert (over_budget.get_json()["chars"], over_budget.get_json()["budget"]) == (400, 100)
    too_big = put(client, "c" * 401, over_budget.headers["ETag"])
    assert too_big.status_code == 413
    error = too_big.get_json()["error"]
    assert (error["code"], error["chars"], error["limit"]) == ("cortex_file_too_large", 401, 400)
    assert client.get(FILE).get_json()["content"] == "b" * 400


def test_history_revision_diff_restore_and_reset(client):
    etag = client.get(FILE).headers["ETag"]
    one = put(client, "one\n", etag)
    two = put(client, "one\ntwo\n", one.headers["ETag"])
    history = client.get(FILE + "/history").get_json()
    assert history["filename"] == "memory.md"
    revs = [r["rev"] for r in history["revisions"]]
    assert revs[:2] == [two.get_json()["revision"], one.get_json()["revision"]]
    assert set(history["revisions"][0]) >= {"rev", "author", "created_at", "summary", "sha256"}

    detail = client.get(f"{FILE}/history/{revs[0]}").get_json()
    assert detail["content"] == "one\ntwo\n"
    assert "+two" in detail["diff"].splitlines() and detail["previous_rev"] == revs[1]

    restored = client.post(f"{FILE}/history/{revs[1]}/restore")
    assert restored.status_code == 200 and restored.get_json()["content"] == "one\n"
    assert client.get(FILE + "/history").get_json()["revisions"][0]["author"] == "restore"
    stale = client.post(f"{FILE}/history/{revs[1]}/restore", headers={"If-Match": etag})
    assert stale.status_code == 412

    reset = client.post(FILE + "/reset", headers={"If-Match": restored.headers["ETag"]})
    assert reset.status_code == 200 and reset.get_json()["content"].startswith("# Memories")
    assert client.get(FILE + "/history").get_json()["revisions"][0]["author"] == "template"


@pytest.mark.parametrize("path", [
    FILE + "/history/999999", FILE + "/history/0", FILE + "/history/abc",
    FILE + "/history/-1", FILE + "/history/99999999999999999999999",
])
def test_unknown_revisions_are_404(client, path):
    assert client.get(path).status_code == 404
    assert client.post(path + "/restore").status_code == 404


def test_revision_of_another_file_is_404(client):
    rev = client.get(URL + "/soul.md").get_json()["revision"]
    response = client.get(f"{FILE}/history/{rev}")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "revision_not_found"


def test_reset_and_restore_refuse_form_bodies(client):
    assert client.post(FILE + "/reset", data="x=1").status_code == 415
    assert client.post(FILE + "/reset", json={}).status_code == 200


def test_unknown_persona_is_404_and_creates_nothing(client, data_dir):
    response = client.get(f"/api/personas/{CUSTOM}/cortex")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "persona_not_found"
    assert not (data_dir / "cortex" / "custom").exists()


def test_custom_persona_templates_follow_the_language_setting(client, data_dir):
    set_setting(provider.get_db().conn(), "app", {"language": "de", "user_name": "Kim"})
    add_persona(CUSTOM)
    body = client.get(f"/api/personas/{CUSTOM}/cortex/relationship.md").get_json()
    assert body["content"].startswith("# Beziehungsdynamik")
    assert "meine Beziehung zu Kim" in body["content"]
    assert (data_dir / "cortex" / "custom" / CUSTOM / "memory.md").is_file()
    assert client.get(URL + "/soul.md").get_json()["content"].startswith("# Soul development")


def test_settings_defaults_and_update(client):
    assert client.get("/api/cortex/settings").get_json() == {
        "enabled": True, "frequency": "medium", "idle_minutes": 30}
    response = client.put("/api/cortex/settings", json={"frequency": "rare", "enabled": False})
    assert response.get_json() == {"enabled": False, "frequency": "rare", "idle_minutes": 30}
    response = client.put("/api/cortex/settings", json={"idle_minutes": 1440})
    assert response.get_json()["idle_minutes"] == 1440
    stored = get_setting(provider.get_db().conn(), "cortex")
    assert stored == {"enabled": False, "frequency": "rare", "idle_minutes": 1440}


@pytest.mark.parametrize("body,field", [
    ({"enabled": "yes"}, "enabled"), ({"enabled": 1}, "enabled"), ({"enabled": None}, "enabled"),
    ({"frequency": "often"}, "frequency"), ({"frequency": 50}, "frequency"),
    ({"frequency": "Medium"}, "frequency"), ({"idle_minutes": 0}, "idle_minutes"),
    ({"idle_minutes": 1441}, "idle_minutes"), ({"idle_minutes": "30"}, "idle_minutes"),
    ({"idle_minutes": True}, "idle_minutes"), ({"idle_minutes": 1.5}, "idle_minutes"),
    ({"idle_minutes": -5}, "idle_minutes"), ({"enabled": True, "colour": "red"}, "colour"),
])
def test_invalid_settings_are_400_and_store_nothing(client, body, field):
    response = client.put("/api/cortex/settings", json=body)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert (error["code"], error["field"]) == ("invalid_setting", field)
    assert field in error["message"]
    assert get_setting(provider.get_db().conn(), "cortex") is None


@pytest.mark.parametrize("kwargs,status", [
    ({"data": "enabled=true"}, 415), ({"json": ["enabled"]}, 400), ({"json": "rare"}, 400)])
def test_settings_body_must_be_a_json_object(client, kwargs, status):
    assert client.put("/api/cortex/settings", **kwargs).status_code == status
