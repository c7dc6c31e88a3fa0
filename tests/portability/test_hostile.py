"""Hostile card files (DESIGN §12): each gets a clear 4xx with a reason and leaves nothing
behind, not a row, not a file. The limits are stated in docs/portability.md."""
import base64
import io
import json
import struct
import zipfile
import zlib

import pytest

from tests.portability.support import V1_CARD, V2_CARD, b64, charx, png, upload

BIG = 4 * 1024 * 1024


def _set_ihdr_size(data: bytes, width: int, height: int) -> bytes:
    """The PNG with IHDR claiming another size (CRC fixed, so only the size is wrong)."""
    body = struct.pack(">II", width, height) + data[24:29]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + body) & 0xFFFFFFFF)
    return data[:16] + body + crc + data[33:]


def _zip(entries: list[tuple], compression=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data, *attr in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            if attr:
                info.external_attr = attr[0]
            archive.writestr(info, data)
    return out.getvalue()


def _bad_crc() -> bytes:
    data = bytearray(png({"chara": b64(V2_CARD)}))
    data[-20] ^= 0xFF
    return bytes(data)


def _duplicate_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("card.json", json.dumps(V2_CARD))
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            archive.writestr("card.json", json.dumps(V1_CARD))
    return out.getvalue()


def _damaged_deflate() -> bytes:
    """A CHARX whose card.json deflate stream is corrupt (found by the fuzz test)."""
    data = bytearray(charx(V2_CARD))
    start = 30 + len("card.json")
    data[start + 5:start + 9] = b"\xff\xff\xff\xff"
    return bytes(data)


def _v2_with(**data) -> bytes:
    return json.dumps({**V2_CARD, "data": {**V2_CARD["data"], **data}}).encode()


CARD_PNG = png({"chara": b64(V2_CARD)})
HOSTILE = {
    "png without chunk": (png({"Title": "hello"}), 400, "no_card_chunk"),
    "truncated png": (CARD_PNG[:-30], 400, "truncated_png"),
    "bad crc": (_bad_crc(), 400, "bad_crc"),
    "chunk over the limit": (png({"chara": "A" * (BIG + 4)}), 413, "chunk_too_large"),
    "ztxt bomb": (png({"chara": "A" * (BIG + 4)}, kind="zTXt"), 413, "chunk_too_large"),
    "invalid base64": (png({"chara": "not*base64!"}), 400, "invalid_base64"),
    "invalid utf-8": (png({"chara": base64.b64encode(b'{"name": "\xff\xfe"}').decode()}),
                      400, "invalid_utf8"),
    "invalid utf-8 json": (b'{"name": "A\xc3", "description": ""}', 400, "invalid_utf8"),
    "not json": (b"{name: Aria}", 400, "invalid_json"),
    "json with trailing garbage": (json.dumps(V1_CARD).encode() + b"}{", 400, "invalid_json"),
    "nan": (b'{"name": "A", "description": NaN}', 400, "invalid_json"),
    "number overflowing to infinity": (b'{"name": "A", "description": "", "x": -1e400}', 400,
                                       "invalid_json"),
    "deep nesting": (b'{"name": "A", "description": "", "x": ' + b"[" * 100_000
                     + b"]" * 100_000 + b"}", 400, "invalid_json"),
    "json that is not a card": (b'{"hello": "world"}', 400, "not_a_card"),
    "v2 without data": (b'{"spec": "chara_card_v2", "data": []}', 400, "not_a_card"),
    "name not a string": (_v2_with(name=["A"]), 400, "bad_field"),
    "no name": (_v2_with(name="  "), 400, "bad_field"),
    "name over 80": (_v2_with(name="N" * 81), 400, "field_invalid"),
    "description over 32000": (_v2_with(description="d" * 32001), 400, "field_invalid"),
    "65 greetings": (_v2_with(alternate_greetings=["hi"] * 65), 400, "field_invalid"),
    "65 tags": (_v2_with(tags=[f"t{i}" for i in range(65)]), 400, "field_invalid"),
    "extensions over 256 KiB": (_v2_with(extensions={"x": "e" * 262_145}), 400,
                                "field_invalid"),
    "lone surrogate": (_v2_with(description="\ud800"), 400, "field_invalid"),
    "control character": (_v2_with(first_mes="bell\x07"), 400, "field_invalid"),
    "card over 2 MiB": (_v2_with(description="d" * (2 * 1024 * 1024)), 413, "card_too_large"),
    "zip bomb (ratio)": (_zip([("card.json", json.dumps(V1_CARD)),
                               ("assets/x.bin", b"\0" * (3 * 1024 * 1024))]), 413, "zip_bomb"),
    "zip bomb (total)": (_zip([("card.json", json.dumps(V1_CARD))] +
                              [(f"a/{i}.bin", b"\0" * (3 * 1024 * 1024)) for i in range(22)]),
                         413, "zip_bomb"),
    "zip entry with ..": (_zip([("card.json", "{}"), ("../evil.txt", "x")]), 400,
                          "path_traversal"),
    "zip entry absolute": (_zip([("card.json", "{}"), ("/etc/evil", "x")]), 400,
                           "absolute_path"),
    "zip entry symlink": (_zip([("card.json", "{}"), ("link", "/etc/passwd", 0o120777 << 16)]),
                          400, "symlink"),
    "zip duplicate names": (_duplicate_zip(), 400, "duplicate_entry"),
    "damaged deflate stream": (_damaged_deflate(), 400, "bad_zip"),
    "charx without card.json": (_zip([("other.json", json.dumps(V2_CARD))]), 400,
                                "no_card_json"),
    "charx icon missing": (charx({**V2_CARD, "spec": "chara_card_v3", "data": {
        **V2_CARD["data"], "assets": [{"type": "icon", "uri": "embeded://nope.png",
                                       "name": "main", "ext": "png"}]}}), 400, "missing_asset"),
    "image bomb": (_set_ihdr_size(CARD_PNG, 30000, 30000), 413, "image_bomb"),
    "png + zip polyglot": (CARD_PNG + charx(V2_CARD), 400, "polyglot"),
    "zip with a prefix": (b"PK\x03\x04" + b"x" * 100 + charx(V2_CARD), 400, "polyglot"),
    "empty file": (b"", 400, "empty_file"),
    "svg": (b"<svg xmlns='http://www.w3.org/2000/svg'/>", 400, "unknown_format"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("preview", [False, True])
def test_a_hostile_card_is_refused_with_a_reason_and_nothing_written(client, snapshot, name,
                                                                    preview):
    data, status, reason = HOSTILE[name]
    before = snapshot()
    url = "/api/personas/import" + ("?preview=1" if preview else "")
    response = upload(client, data, url)
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == ("too_large" if status == 413 else "invalid_card")
    assert error["reason"] == reason and error["message"]
    assert snapshot() == before


def test_a_file_over_the_upload_limit_is_refused(client, snapshot):
    before = snapshot()
    response = upload(client, b"{" + b" " * (16 * 1024 * 1024))
    assert response.status_code == 413
    assert response.get_json()["error"]["code"] in ("too_large", "payload_too_large")
    assert snapshot() == before


def test_the_file_must_come_as_multipart_field_file(client):
    assert client.post("/api/personas/import", json=V1_CARD).status_code == 415
    response = client.post("/api/personas/import", data={"other": (io.BytesIO(b"{}"), "a")},
                           content_type="multipart/form-data")
    assert response.status_code == 400 and response.get_json()["error"]["reason"] == "no_file"


def test_a_failure_half_way_leaves_no_partial_persona(client, data_dir, snapshot):
    """The cortex directory cannot be created: the persona row and avatar roll back."""
    (data_dir / "cortex" / "custom").write_text("not a directory")
    before = snapshot()
    response = upload(client, png({"chara": b64(V2_CARD)}))
    assert response.status_code == 500
    assert snapshot() == before
    names = [p["name"] for p in client.get("/api/personas").get_json()["personas"]]
    assert names == [client.get("/api/personas/default").get_json()["name"]]
