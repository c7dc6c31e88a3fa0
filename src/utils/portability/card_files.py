"""Card files in and out: PNG (`ccv3` preferred over `chara`), plain JSON and CHARX.

The format is chosen by the file's first bytes, never by its name, and each reader insists the
file is entirely what it claims (no bytes after a PNG's IEND, none before a zip's first entry,
nothing after the JSON), so a polyglot file is refused rather than read one way here and
another way elsewhere.
"""
import base64
import io
import json
import zipfile

from . import cards, images, letta, png
from .errors import MAX_CARD_JSON, MAX_UPLOAD, invalid_card, too_large
from .safezip import SafeZip

CHARX_ICON_PATH = "assets/icon/images/main"
CARD_CHUNKS = frozenset({"ccv3", "chara"})  # the only PNG text chunks read (png.text_chunks)


def read_card(data: bytes) -> dict:
    """`{format, version, fields, cortex, ignored, image}` from an uploaded file."""
    if len(data) > MAX_UPLOAD:
        raise too_large("file_too_large", f"The file is larger than {MAX_UPLOAD} bytes.")
    if not data:
        raise invalid_card("empty_file", "The file is empty.")
    image: bytes | None
    if png.is_png(data):
        card, image = _read_png(data), data
        fmt = "png"
    elif data.startswith(b"PK\x03\x04"):
        card, image, extra = _read_charx(data)
        fmt = "charx"
    elif data.lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").startswith(b"{"):
        card, fmt = cards.decode_json(data, "JSON file"), "json"
        if letta.is_agent_file(card):
            return {"format": "af", **letta.parse(card), "image": None}
        image = _data_uri_icon(card)
    else:
        raise invalid_card("unknown_format", "The file is not a character card: expected a PNG, "
                           "a JSON file or a CHARX archive.")
    parsed = cards.parse(card)
    if fmt == "charx":
        parsed["ignored"] += extra
    return {"format": fmt, **parsed, "image": image}


def _read_png(data: bytes) -> dict:
    found = {}
    for keyword, text in png.text_chunks(data, CARD_CHUNKS):
        key = keyword.lower()
        if key in ("ccv3", "chara"):
            if key in found:
                raise invalid_card("duplicate_chunk", f"The PNG has two `{key}` chunks.")
            found[key] = text
    if not found:
        raise invalid_card("no_card_chunk", "The PNG holds no character card (no `ccv3` or "
                           "`chara` text chunk).")
    key = "ccv3" if "ccv3" in found else "chara"
    return cards.decode_text(found[key], f"PNG `{key}`")


def _read_charx(data: bytes) -> tuple[dict, bytes | None, list[str]]:
    with SafeZip(data) as archive:
        if "card.json" not in archive.names():
            raise invalid_card("no_card_json", "The CHARX archive has no card.json at its root.")
        card = cards.decode_json(archive.read("card.json", MAX_CARD_JSON), "card.json")
        icon, ignored = _charx_icon(card, archive)
    return card, icon, ignored


def _charx_icon(card: dict, archive: SafeZip) -> tuple[bytes | None, list[str]]:
    """The main icon's bytes (if embedded) and notes on the assets not kept."""
    main = _main_icon(card)
    if main is None:
        return None, []
    assets = card["data"]["assets"]
    ignored = [f"asset `{str(a.get('name'))[:60]}` ({str(a.get('type'))[:20]}) is not kept"
               for a in assets if isinstance(a, dict) and a is not main
               and str(a.get("uri", "")).startswith("embeded://")]
    uri = str((main or {}).get("uri", ""))
    if not uri.startswith("embeded://"):
        return None, ignored
    path = uri[len("embeded://"):]
    if path not in archive.names():
        raise invalid_card("missing_asset", f"The CHARX main icon {path[:80]!r} is not in "
                           "the archive.")
    return archive.read(path, images.MAX_BYTES), ignored


def _main_icon(card: dict) -> dict | None:
    data = card.get("data")
    assets = data.get("assets") if isinstance(data, dict) else None
    if not isinstance(assets, list):
        return None
    icons = [a for a in assets if isinstance(a, dict) and a.get("type") == "icon"]
    return next((a for a in icons if a.get("name") == "main"), icons[0] if icons else None)


def _data_uri_icon(card: dict) -> bytes | None:
    """The main icon of a JSON card when it is a base64 `data:` URL (how our JSON export
    carries the avatar), else None."""
    uri = str((_main_icon(card) or {}).get("uri", ""))
    header, sep, payload = uri.partition(",")
    if not (uri.startswith("data:image/") and sep and header.endswith(";base64")):
        return None
    if len(payload) > images.MAX_BYTES * 4 // 3 + 4:
        raise too_large("image_too_large", f"The card's icon is larger than {images.MAX_BYTES} "
                        "bytes.")
    try:
        return base64.b64decode(payload, validate=True)
    except ValueError:
        raise invalid_card("invalid_base64", "The card's icon data URL is not valid "
                           "base64.") from None


def json_card(v3: dict, avatar: dict | None) -> bytes:
    """The V3 card as JSON; the avatar travels as the main icon, a base64 data URL."""
    data = dict(v3["data"])
    if avatar:
        uri = f"data:{avatar['mime']};base64,{base64.b64encode(avatar['data']).decode()}"
        data["assets"] = [{"type": "icon", "uri": uri, "name": "main",
                           "ext": images.EXTENSIONS[avatar["mime"]]},
                          *_foreign_assets(data)]
    return json.dumps({**v3, "data": data}, ensure_ascii=False, indent=2).encode("utf-8")


def _foreign_assets(data: dict) -> list:
    """Assets we pass through: not embedded in a file we no longer have, not our main icon."""
    return [a for a in data.get("assets") or [] if isinstance(a, dict)
            and not str(a.get("uri", "")).startswith(("embeded://", "data:"))
            and not (a.get("type") == "icon" and a.get("name") == "main")]


def png_card(image_png: bytes, v3: dict, v2: dict) -> bytes:
    """`image_png` carrying the V3 card (`ccv3`) and a V2 backfill (`chara`)."""
    return png.with_text_chunks(image_png, [("ccv3", _b64(v3)), ("chara", _b64(v2))],
                                drop=("ccv3", "chara"))


def charx(v3: dict, avatar: dict | None) -> bytes:
    """A CHARX zip: card.json at the root and the avatar as the main icon asset."""
    data = dict(v3["data"])
    assets = _foreign_assets(data)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if avatar:
            ext = images.EXTENSIONS[avatar["mime"]]
            path = f"{CHARX_ICON_PATH}.{ext}"
            assets.insert(0, {"type": "icon", "uri": f"embeded://{path}", "name": "main",
                              "ext": ext})
            archive.writestr(path, avatar["data"])
        data["assets"] = assets or [{"type": "icon", "uri": "ccdefault:", "name": "main",
                                     "ext": "png"}]
        archive.writestr("card.json", json.dumps({**v3, "data": data}, ensure_ascii=False))
    return out.getvalue()


def _b64(card: dict) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")
