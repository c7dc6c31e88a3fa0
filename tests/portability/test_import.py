"""Importing character cards (DESIGN §12): V1, V2 and V3 as JSON, PNG (tEXt, zTXt, iTXt) and
CHARX, mapped onto the persona's fields with everything else kept verbatim."""
import json

import pytest

from tests.portability.support import V1_CARD, V2_CARD, V3_CARD, b64, charx, pixels, png, upload


def _created(response) -> dict:
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_v1_json_card_becomes_a_persona(client):
    persona = _created(upload(client, json.dumps(V1_CARD).encode(), filename="aria.json"))
    assert persona["name"] == "Aria"
    assert persona["description"] == V1_CARD["description"]
    assert persona["personality"] == "calm, curious"
    assert persona["scenario"] == V1_CARD["scenario"]
    assert persona["greeting"] == V1_CARD["first_mes"]
    assert persona["example_dialogue"] == V1_CARD["mes_example"]
    assert persona["extensions"] == {} and persona["avatar_url"] is None
    assert client.get(f"/api/personas/{persona['id']}").get_json() == persona


def test_a_v2_card_keeps_every_field_and_unknown_extensions_verbatim(client):
    persona = _created(upload(client, json.dumps(V2_CARD).encode(), filename="aria.json"))
    data = V2_CARD["data"]
    assert persona["alternate_greetings"] == data["alternate_greetings"]
    assert persona["creator_notes"] == data["creator_notes"]
    assert persona["system_prompt"] == data["system_prompt"]
    assert persona["post_history_instructions"] == data["post_history_instructions"]
    assert persona["tags"] == ["fantasy", "sea"]
    assert persona["extensions"] == data["extensions"]
    assert "character_book" not in persona["card"]  # it became the persona's own book
    book = client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"][0]
    assert book["persona_id"] == persona["id"] and book["name"] == "Coast"
    assert [(e["keys"], e["content"]) for e in book["entries"]] == [(["lamp"],
                                                                    "The lamp is old.")]
    assert persona["card"]["creator"] == "someone"
    assert persona["card"]["character_version"] == "1.2"
    assert persona["use_card_prompts"] is True


def test_a_v3_card_keeps_its_v3_fields(client):
    persona = _created(upload(client, json.dumps(V3_CARD).encode(), filename="aria.json"))
    card = persona["card"]
    for key in ("nickname", "source", "group_only_greetings", "creation_date",
                "modification_date", "creator_notes_multilingual", "assets"):
        assert card[key] == V3_CARD["data"][key], key


def test_a_v2_only_png_is_read_from_its_chara_chunk_and_becomes_the_avatar(client):
    persona = _created(upload(client, png({"chara": b64(V2_CARD)}, size=(30, 20))))
    assert persona["name"] == "Aria" and persona["avatar_url"]
    avatar = client.get(persona["avatar_url"])
    assert avatar.status_code == 200 and avatar.mimetype == "image/png"
    assert pixels(avatar.data) == ("PNG", (30, 20), (200, 30, 40))
    assert b"chara" not in avatar.data and b"tEXt" not in avatar.data


def test_a_png_with_both_chunks_prefers_ccv3(client):
    v2 = json.loads(json.dumps(V2_CARD))
    v2["data"]["name"] = "Old Aria"
    persona = _created(upload(client, png({"chara": b64(v2), "ccv3": b64(V3_CARD)})))
    assert persona["name"] == "Aria" and persona["card"]["nickname"] == "Ari"


@pytest.mark.parametrize("kind", ["zTXt", "iTXt"])
def test_compressed_and_international_text_chunks_are_read(client, kind):
    persona = _created(upload(client, png({"ccv3": b64(V3_CARD)}, kind=kind)))
    assert persona["card"]["nickname"] == "Ari"


def test_a_charx_with_assets_uses_its_main_icon(client):
    icon = png(size=(40, 40), color=(10, 200, 30))
    other = png(size=(5, 5), color=(1, 2, 3))
    card = json.loads(json.dumps(V3_CARD))
    card["data"]["assets"] = [
        {"type": "background", "uri": "embeded://assets/background/images/sea.png",
         "name": "main", "ext": "png"},
        {"type": "icon", "uri": "embeded://assets/icon/images/main.png", "name": "main",
         "ext": "png"}]
    data = charx(card, {"assets/icon/images/main.png": icon,
                        "assets/background/images/sea.png": other})
    preview = upload(client, data, "/api/personas/import?preview=1", "aria.charx").get_json()
    assert preview["format"] == "charx" and preview["spec_version"] == 3
    assert any("background" in note for note in preview["ignored"])
    persona = _created(upload(client, data, filename="aria.charx"))
    assert pixels(client.get(persona["avatar_url"]).data) == ("PNG", (40, 40), (10, 200, 30))


def test_preview_shows_what_would_be_created_and_stores_nothing(client, snapshot):
    before = snapshot()
    response = upload(client, png({"ccv3": b64(V3_CARD)}), "/api/personas/import?preview=1")
    assert response.status_code == 200
    preview = response.get_json()
    assert preview["persona"]["name"] == "Aria"
    assert preview["persona"]["greeting"] == V3_CARD["data"]["first_mes"]
    assert preview["persona"]["avatar_url"].startswith("data:image/png;base64,")
    assert preview["includes_memories"] is False and preview["name_clash"] is False
    assert not any("lorebook" in note for note in preview["ignored"])  # used at chat time
    assert any("agnai/voice" in note for note in preview["ignored"])
    assert snapshot() == before


def test_a_name_clash_creates_a_second_persona(client):
    first = _created(upload(client, json.dumps(V2_CARD).encode(), filename="a.json"))
    preview = upload(client, json.dumps(V2_CARD).encode(), "/api/personas/import?preview=1",
                     "a.json").get_json()
    assert preview["name_clash"] is True
    second = _created(upload(client, json.dumps(V2_CARD).encode(), filename="a.json"))
    assert second["id"] != first["id"]
    assert client.get(f"/api/personas/{first['id']}").get_json() == first
    names = [p["name"] for p in client.get("/api/personas").get_json()["personas"]]
    assert names.count("Aria") == 2


def test_the_file_type_comes_from_its_bytes_not_its_name(client):
    persona = _created(upload(client, json.dumps(V1_CARD).encode(), filename="card.png"))
    assert persona["name"] == "Aria"
