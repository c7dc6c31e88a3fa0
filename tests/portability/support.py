"""Cards built by the tests themselves: Pillow writes the PNG chunks, zipfile the CHARX."""
import base64
import copy
import io
import json
import zipfile
from pathlib import Path

from PIL import Image, PngImagePlugin
from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

# A SillyTavern chat as its `saveChat` writes one: swipes, a hidden system message, every date
# form SillyTavern has used (docs/chat-import.md).
ST_CHAT = (Path(__file__).parent / "files" / "sillytavern_chat.jsonl").read_bytes()

V1_CARD = {"name": "Aria", "description": "{{char}} is a lighthouse keeper.",
           "personality": "calm, curious", "scenario": "A stormy night at the lighthouse.",
           "first_mes": "*{{char}} opens the door.* Come in, {{user}}, quickly!",
           "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Hello there."}

V2_CARD = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
    **V1_CARD,
    "creator_notes": "Best with slow burns. Secret note for humans only: PLUM-7731.",
    "system_prompt": "Write vividly. {{original}}",
    "post_history_instructions": "Stay in the storm's mood.",
    "alternate_greetings": ["The lamp flickers. {{user}}?", "Another ship, {{user}}."],
    "character_book": {"name": "Coast", "extensions": {}, "entries": [
        {"keys": ["lamp"], "content": "The lamp is old.", "extensions": {"x": 1},
         "enabled": True, "insertion_order": 0}]},
    "tags": ["fantasy", "sea"], "creator": "someone", "character_version": "1.2",
    "extensions": {"talkativeness": "0.5", "depth_prompt": {"prompt": "p", "depth": 4},
                   "agnai/voice": {"id": 3}},
}}

V3_CARD = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
    **copy.deepcopy(V2_CARD["data"]),
    "nickname": "Ari", "source": ["https://example.org/aria"],
    "group_only_greetings": ["Hello, all of you."],
    "creation_date": 1700000000, "modification_date": 1700000500,
    "creator_notes_multilingual": {"de": "Am besten langsam."},
    "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
}}


def b64(card: dict) -> str:
    """A card as its PNG chunk text: base64 of UTF-8 JSON."""
    return base64.b64encode(json.dumps(card).encode("utf-8")).decode("ascii")


def png(texts: dict | None = None, *, size=(16, 12), color=(200, 30, 40), kind: str = "tEXt",
        fmt: str = "PNG") -> bytes:
    """An image (PNG unless `fmt` says otherwise) with text chunks written by Pillow."""
    info = PngImagePlugin.PngInfo()
    for key, value in (texts or {}).items():
        if kind == "iTXt":
            info.add_itxt(key, value)
        else:
            info.add_text(key, value, zip=kind == "zTXt")
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt, pnginfo=info) if fmt == "PNG" \
        else Image.new("RGB", size, color).save(out, fmt)
    return out.getvalue()


def charx(card: dict, files: dict[str, bytes] | None = None) -> bytes:
    """A CHARX zip: card.json at the root plus `files`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("card.json", json.dumps(card))
        for name, data in (files or {}).items():
            archive.writestr(name, data)
    return out.getvalue()


def upload(client, data: bytes, url: str = "/api/personas/import", filename: str = "card.png",
           method: str = "post"):
    """Posts `data` as the multipart field `file` (encoded in memory: werkzeug's test client
    would spool a large body to a temporary file it never closes)."""
    boundary, body = encode_multipart({"file": FileStorage(io.BytesIO(data), filename)})
    return getattr(client, method)(url, data=body,
                                   content_type=f"multipart/form-data; boundary={boundary}")


def pixels(data: bytes) -> tuple:
    """`(format, size, first pixel)` of an image."""
    with Image.open(io.BytesIO(data)) as image:
        return image.format, image.size, image.convert("RGB").getpixel((0, 0))
