"""Avatars (DESIGN §12): uploaded pictures are re-encoded (metadata gone, size capped), only PNG,
JPEG and WebP are accepted, never SVG, and they are served with a safe content type."""
import io
import sqlite3
from contextlib import closing

import pytest
from PIL import Image

from tests.portability.support import pixels, png, upload


def _image(fmt: str, size=(64, 48), color=(20, 120, 220), **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt, **save)
    return out.getvalue()


def _exif_with_gps() -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "SecretCam"  # Make
    exif[0x8825] = {1: "N", 2: (52.0, 31.0, 0.0)}  # GPS info
    return _image("JPEG", exif=exif.tobytes())


@pytest.fixture
def persona(client) -> dict:
    return client.post("/api/personas", json={"name": "Pic"}).get_json()


def _put(client, pid: str, data: bytes):
    return upload(client, data, f"/api/personas/{pid}/avatar", "me.img", method="put")


@pytest.mark.parametrize("fmt,mime", [("PNG", "image/png"), ("JPEG", "image/jpeg"),
                                      ("WEBP", "image/webp")])
def test_an_uploaded_picture_is_re_encoded_and_served_safely(client, persona, fmt, mime):
    response = _put(client, persona["id"], _image(fmt))
    assert response.status_code == 200, response.get_json()
    url = response.get_json()["avatar_url"]
    assert url.startswith(f"/api/personas/{persona['id']}/avatar?v=")
    served = client.get(url)
    assert served.status_code == 200 and served.mimetype == mime
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'none'" in served.headers["Content-Security-Policy"]
    assert pixels(served.data)[:2] == (fmt, (64, 48))
    listed = client.get("/api/personas").get_json()["personas"]
    assert [p["avatar_url"] for p in listed if p["id"] == persona["id"]] == [url]


def test_metadata_is_stripped(client, persona):
    source = _exif_with_gps()
    assert b"SecretCam" in source
    _put(client, persona["id"], source)
    data = client.get(f"/api/personas/{persona['id']}/avatar").data
    assert b"SecretCam" not in data and b"Exif" not in data
    _put(client, persona["id"], png({"Comment": "home address"}))
    assert b"home address" not in client.get(f"/api/personas/{persona['id']}/avatar").data


def test_a_large_picture_is_scaled_down(client, persona):
    _put(client, persona["id"], _image("PNG", size=(2048, 1024)))
    assert pixels(client.get(f"/api/personas/{persona['id']}/avatar").data)[1] == (1024, 512)


REFUSED = {
    "svg": (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 400,
            "unsupported_format"),
    "gif": (_image("GIF"), 400, "unsupported_format"),
    "svg named png": (b"<?xml version='1.0'?><svg/>", 400, "unsupported_format"),
    "truncated jpeg": (_image("JPEG")[:200], 400, "undecodable"),
    "png header only": (_image("PNG")[:40], 400, "undecodable"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_other_pictures_are_refused_and_nothing_changes(client, persona, snapshot, name):
    data, status, reason = REFUSED[name]
    before = snapshot()
    response = _put(client, persona["id"], data)
    assert response.status_code == status
    assert response.get_json()["error"]["reason"] == reason
    assert snapshot() == before


def test_an_image_bomb_is_refused_before_decoding(client, persona, snapshot):
    from tests.portability.test_hostile import _set_ihdr_size
    before = snapshot()
    response = _put(client, persona["id"], _set_ihdr_size(_image("PNG"), 50000, 50000))
    assert response.status_code == 413
    assert response.get_json()["error"]["reason"] == "image_bomb"
    assert snapshot() == before


def test_removing_the_avatar(client, persona):
    _put(client, persona["id"], _image("PNG"))
    response = client.delete(f"/api/personas/{persona['id']}/avatar")
    assert response.status_code == 200 and response.get_json()["avatar_url"] is None
    missing = client.get(f"/api/personas/{persona['id']}/avatar")
    assert missing.status_code == 404
    assert missing.get_json()["error"]["code"] == "avatar_not_found"


def test_deleting_the_persona_deletes_its_avatar(client, persona, data_dir):
    _put(client, persona["id"], _image("PNG"))
    assert client.delete(f"/api/personas/{persona['id']}").status_code == 200
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        assert conn.execute("SELECT count(*) FROM persona_avatars").fetchone()[0] == 0
    assert client.get(f"/api/personas/{persona['id']}/avatar").status_code == 404
