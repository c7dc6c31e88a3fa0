"""Property-based fuzzing of the card importers (DESIGN §12): whatever the bytes, the answer is
never a 5xx, nothing is written outside the new persona's own place, and a refused file leaves
no trace (no partial persona)."""
import json
import os
import sqlite3
import tempfile
from contextlib import closing

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.portability.support import V1_CARD, V2_CARD, V3_CARD, b64, charx, png, upload

SEEDS = [png({"chara": b64(V2_CARD)}), png({"ccv3": b64(V3_CARD)}, kind="zTXt"),
         json.dumps(V2_CARD).encode(), json.dumps(V1_CARD).encode(),
         charx(V3_CARD, {"assets/icon/images/main.png": png()})]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=20)
_KEYS = st.sampled_from(["name", "description", "first_mes", "alternate_greetings", "tags",
                         "extensions", "assets", "character_book", "spec", "data", "nickname"])


@st.composite
def mutated(draw) -> bytes:
    """A valid card file with bytes flipped, cut, or inserted."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if action == "flip" and data:
            data[pos] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[pos:pos + draw(st.integers(1, 64))]
        else:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
    return bytes(data)


@st.composite
def odd_cards(draw) -> bytes:
    """Card-shaped JSON with fields of any type, as JSON or inside a PNG chunk."""
    data = dict(V2_CARD["data"])
    data.update(draw(st.dictionaries(_KEYS, _JSON, max_size=4)))
    card = {"spec": draw(st.sampled_from(["chara_card_v2", "chara_card_v3", None])), "data": data}
    if card["spec"] is None:
        card = data
    if draw(st.booleans()):
        return png({"ccv3": b64(card)})
    return json.dumps(card).encode()


def _files(root: str) -> set:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _personas(data_dir) -> list:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM personas ORDER BY id")]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.one_of(mutated(), odd_cards(), st.binary(max_size=256)))
def test_no_input_makes_an_importer_fail_or_leave_a_partial_persona(client, data_dir, tmp_path,
                                                                   monkeypatch, data):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before_files, before_ids = _files(str(data_dir)), _personas(data_dir)
    preview = upload(client, data, "/api/personas/import?preview=1")
    assert preview.status_code < 500, preview.get_json()
    assert _files(str(data_dir)) == before_files and _personas(data_dir) == before_ids
    response = upload(client, data)
    assert response.status_code < 500, response.get_json()
    assert (preview.status_code == 200) == (response.status_code == 201)
    after_ids = _personas(data_dir)
    if response.status_code == 201:
        new = response.get_json()["id"]
        assert sorted(after_ids) == sorted([*before_ids, new])
        added = _files(str(data_dir)) - before_files
        assert added <= {f"cortex/custom/{new}/{name}" for name in
                         ("memory.md", "soul.md", "relationship.md")} | {
            f"cortex/.locks/{new}.lock"}
        assert client.delete(f"/api/personas/{new}").status_code == 200
    else:
        assert response.get_json()["error"]["code"] in ("invalid_card", "too_large",
                                                        "invalid_image")
        assert after_ids == before_ids and _files(str(data_dir)) == before_files
    assert os.listdir(scratch) == []
