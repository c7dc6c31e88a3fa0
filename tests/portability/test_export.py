"""Exporting personas as cards (DESIGN §12): V3 PNG with a V2 `chara` backfill, JSON and CHARX;
memories only when asked; our export imported again gives the same persona and cortex."""
import base64
import io
import json
import zipfile

import pytest

from src.utils import provider
from src.utils.portability import png as png_chunks
from src.utils.portability.card_files import CARD_CHUNKS
from src.utils.portability.cards import V2_BACKFILL_NOTE
from tests.portability.support import V2_CARD, V3_CARD, b64, png, upload

SAME = ("name", "description", "user_name", "language", "greeting", "personality", "scenario",
        "example_dialogue", "alternate_greetings", "creator_notes", "system_prompt",
        "post_history_instructions", "use_card_prompts", "tags", "extensions")


@pytest.fixture
def persona(client):
    """An imported V3 card with an avatar and a cortex of its own."""
    created = upload(client, png({"ccv3": b64(V3_CARD)}, size=(20, 20))).get_json()
    client.put(f"/api/personas/{created['id']}", json={"user_name": "Sam", "language": "de",
                                                        "use_card_prompts": False})
    for name, text in (("memory.md", "Sam sails on Sundays."), ("soul.md", "I grow calmer."),
                       ("relationship.md", "We trust each other.")):
        response = client.put(f"/api/personas/{created['id']}/cortex/{name}",
                              json={"content": text}, headers={"If-Match": "*"})
        assert response.status_code == 200, response.get_json()
    return client.get(f"/api/personas/{created['id']}").get_json()


def _export(client, pid: str, query: str = "") -> bytes:
    response = client.get(f"/api/personas/{pid}/export{query}")
    assert response.status_code == 200, response.get_data()[:300]
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    return response.data


def _chunks(data: bytes) -> dict:
    return {k: json.loads(base64.b64decode(v))
            for k, v in png_chunks.text_chunks(data, CARD_CHUNKS)}


def _cortex(client, pid: str) -> dict:
    files = client.get(f"/api/personas/{pid}/cortex").get_json()["files"]
    return {f["filename"]: f["content"] for f in files}


def test_the_png_export_carries_a_v3_card_and_a_v2_backfill(client, persona):
    data = _export(client, persona["id"])
    chunks = _chunks(data)
    v3, v2 = chunks["ccv3"], chunks["chara"]
    assert v3["spec"] == "chara_card_v3" and v3["spec_version"] == "3.0"
    assert v2["spec"] == "chara_card_v2" and v2["spec_version"] == "2.0"
    assert v3["data"]["name"] == v2["data"]["name"] == "Aria"
    assert v3["data"]["extensions"]["agnai/voice"] == {"id": 3}
    assert v2["data"]["creator_notes"].startswith(V2_BACKFILL_NOTE)
    assert v3["data"]["character_book"] == V2_CARD["data"]["character_book"]
    assert v3["data"]["nickname"] == "Ari"
    assert v3["data"]["creation_date"] == 1700000000
    assert v3["data"]["group_only_greetings"] == ["Hello, all of you."]
    assert "cortex" not in v3["data"]["extensions"]["persona_cortex"]
    assert b"Sam sails" not in data


def test_memories_travel_only_when_asked(client, persona):
    for query in ("", "?include_memories=0", "?format=json", "?format=charx"):
        assert b"Sam sails" not in _export(client, persona["id"], query), query
    v3 = json.loads(_export(client, persona["id"], "?format=json&include_memories=1"))
    ours = v3["data"]["extensions"]["persona_cortex"]
    assert ours["format_version"] == 1
    files = ours["cortex"]["files"]
    assert files["memory.md"]["content"] == "Sam sails on Sundays."
    assert isinstance(files["memory.md"]["revision"], int)


@pytest.mark.parametrize("fmt", ["png", "json", "charx"])
def test_our_export_imports_as_the_same_persona_and_cortex(client, persona, fmt):
    data = _export(client, persona["id"], f"?format={fmt}&include_memories=1")
    response = upload(client, data, filename=f"aria.{fmt}")
    assert response.status_code == 201, response.get_json()
    again = response.get_json()
    assert again["id"] != persona["id"]
    assert {k: again[k] for k in SAME} == {k: persona[k] for k in SAME}
    kept = {k: v for k, v in persona["card"].items() if k not in ("modification_date",
                                                                    "assets")}
    assert {k: again["card"][k] for k in kept} == kept
    assert _cortex(client, again["id"]) == _cortex(client, persona["id"])
    assert client.get(again["avatar_url"]).data == client.get(persona["avatar_url"]).data


def test_an_imported_cortex_starts_as_a_template_revision_noted_as_an_import(client, persona):
    data = _export(client, persona["id"], "?format=json&include_memories=1")
    again = upload(client, data, filename="a.json").get_json()
    history = client.get(f"/api/personas/{again['id']}/cortex/memory.md/history").get_json()
    revisions = history["revisions"]
    assert len(revisions) == 1
    assert revisions[0]["author"] == "template" and "import" in revisions[0]["summary"]


def test_without_memories_the_import_gets_fresh_templates(app, client, persona):
    data = _export(client, persona["id"], "?format=json")
    again = upload(client, data, filename="a.json").get_json()
    assert "Sam sails" not in json.dumps(_cortex(client, again["id"]))


def test_the_charx_export_holds_the_avatar_as_its_main_icon(client, persona):
    data = _export(client, persona["id"], "?format=charx")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        card = json.loads(archive.read("card.json"))
        icon = card["data"]["assets"][0]
        assert icon["type"] == "icon" and icon["name"] == "main"
        path = icon["uri"].removeprefix("embeded://")
        assert archive.read(path) == client.get(persona["avatar_url"]).data


def test_a_persona_without_avatar_exports_a_placeholder_png(client):
    created = client.post("/api/personas", json={"name": "Plain"}).get_json()
    data = _export(client, created["id"])
    assert data.startswith(b"\x89PNG") and _chunks(data)["ccv3"]["data"]["name"] == "Plain"


def test_export_rejects_an_unknown_format(client, persona):
    response = client.get(f"/api/personas/{persona['id']}/export?format=gif")
    assert response.status_code == 400
    assert client.get("/api/personas/nosuchpersona/export").status_code == 404


def test_the_af_export_has_the_three_blocks_with_their_budget(app, client, persona):
    response = client.get(f"/api/personas/{persona['id']}/export/af")
    assert response.status_code == 200
    document = json.loads(response.data)
    blocks = {b["label"]: b for b in document["blocks"]}
    assert set(blocks) == {"memory", "soul", "relationship"}
    budget = provider.get_cortex_service(app).budget
    assert blocks["memory"]["value"] == "Sam sails on Sundays."
    assert all(b["limit"] == budget and b["description"] for b in blocks.values())
    agent = document["agents"][0]
    assert agent["name"] == "Aria" and agent["block_ids"] == [b["id"] for b in document["blocks"]]


def test_an_af_export_imports_as_a_persona_with_that_cortex(client, persona):
    data = client.get(f"/api/personas/{persona['id']}/export/af").data
    preview = upload(client, data, "/api/personas/import?preview=1", "aria.af").get_json()
    assert preview["format"] == "af" and preview["includes_memories"] is True
    again = upload(client, data, filename="aria.af").get_json()
    assert again["name"] == "Aria" and again["description"] == persona["description"]
    assert _cortex(client, again["id"]) == _cortex(client, persona["id"])
    history = client.get(f"/api/personas/{again['id']}/cortex/soul.md/history").get_json()
    assert [r["author"] for r in history["revisions"]] == ["template"]
    assert "Letta" in history["revisions"][0]["summary"]


def test_a_letta_agent_with_human_and_persona_blocks(client):
    document = {"agents": [{"name": "Sam's helper", "system": "You are MemGPT...",
                            "core_memory": [
                                {"label": "human", "value": "Name: Sam.", "limit": 5000},
                                {"label": "persona", "value": "I am kind.", "limit": 5000},
                                {"label": "tasks", "value": "none", "limit": 100}]}]}
    response = upload(client, json.dumps(document).encode(), filename="helper.af")
    assert response.status_code == 201, response.get_json()
    cortex = _cortex(client, response.get_json()["id"])
    assert cortex["memory.md"] == "Name: Sam." and cortex["soul.md"] == "I am kind."
    preview = upload(client, json.dumps(document).encode(), "/api/personas/import?preview=1",
                     "helper.af").get_json()
    assert any("tasks" in note for note in preview["ignored"])
    assert any("system prompt" in note for note in preview["ignored"])
