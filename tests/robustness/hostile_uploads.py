"""Hostile uploads built byte by byte: small files that cost a server seconds of CPU if it decodes
or lists them before checking their declared size (issue 21)."""
import base64
import hashlib
import http.client
import io
import json
import random
import struct
import uuid
import zipfile
import zlib
from contextlib import closing

CARD = {"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Zero", "description": "d", "personality": "", "scenario": "",
                 "first_mes": "", "mes_example": ""}}


def chunk(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk with its length and CRC."""
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I4s", len(body), kind) + body + struct.pack(">I", crc)


def zero_png(width: int, height: int, texts: tuple = ()) -> bytes:
    """An RGBA PNG of `width`×`height` transparent black pixels: 6000×6000 is 137 KiB on disk
    and 144 MB inflated."""
    squeeze = zlib.compressobj(9)
    row = b"\0" * (1 + 4 * width)
    idat = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    parts = [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", header)]
    parts += [chunk(b"tEXt", k.encode("latin-1") + b"\0" + t.encode("latin-1")) for k, t in texts]
    return b"".join([*parts, chunk(b"IDAT", idat), chunk(b"IEND", b"")])


def zero_card_png(width: int = 6000, height: int = 6000) -> bytes:
    """`zero_png` carrying a valid V2 card in its `chara` chunk (so an importer reaches the
    picture)."""
    text = base64.b64encode(json.dumps(CARD).encode("utf-8")).decode("ascii")
    return zero_png(width, height, (("chara", text),))


def many_entry_zip(count: int = 150_000, broken_at: int | None = None) -> bytes:
    """A zip of `count` empty stored entries (zip64 end records past 65,535): about 12 MiB;
    the directory record at `broken_at` lacks its signature (see `zip_entries`)."""
    local, directory = zip_entries(count, broken_at)
    start, size = len(local), len(directory)
    eocd64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, start)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, start + size, 1)
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                       0xFFFFFFFF, 0)
    return local + directory + eocd64 + locator + eocd


def zip_entries(count: int, broken_at: int | None = None) -> tuple[bytes, bytes]:
    """The local records and the central directory of `count` empty stored entries; the record
    at `broken_at` lacks its signature (a parse of the directory stops there)."""
    local, central = [], []
    offset = 0
    for index in range(count):
        name = f"{index:06d}".encode()
        head = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0)
        signature = b"PK\x01\x99" if index == broken_at else b"PK\x01\x02"
        central.append(struct.pack("<4s6H3L5H2L", signature, 20, 20, 0, 0, 0, 0, 0, 0, 0,
                                   len(name), 0, 0, 0, 0, 0, offset) + name)
        local.append(head + name)
        offset += len(head) + len(name)
    return b"".join(local), b"".join(central)


WORDS = ["tide", "lamp", "harbour", "storm", "keeper", "rope", "gull", "salt", "night", "shore",
         "beacon", "wave", "fog", "bell", "anchor", "cliff", "ember", "drift", "lantern", "mast"]


def _text(index: int, words: int) -> str:
    """Varied prose (so a backup of it has something to compress), the same for each index."""
    return " ".join(random.Random(index).choices(WORDS, k=words))


def persona_archive(messages: int, *, format_version=1, broken_last: bool = False,
                    words: int = 2, revisions: tuple[str, ...] = ()) -> bytes:
    """A persona archive (archive.py's layout) with one session of `messages` messages of
    `words` words; with `broken_last` the last one has an unknown role, so the whole file is
    read, then refused. Each of `revisions` becomes an update's revision of memory.md (author
    `ai`) that read the whole session, in order."""
    rows = [{"id": i + 1, "session_id": "s1", "role": "user" if i % 2 == 0 else "assistant",
             "content": _text(i, words), "status": "complete",
             "created_at": "2026-01-01T00:00:00Z"} for i in range(messages)]
    if broken_last and rows:
        rows[-1]["role"] = "system"
    entries = {"persona.json": {"name": "Archived"},
               "sessions.json": [{"id": "s1", "title": "t", "created_at": "2026-01-01T00:00:00Z",
                                  "updated_at": "2026-01-01T00:00:00Z"}],
               "messages.json": rows, "revisions.json": _ai_revisions(revisions, messages),
               "state.json": {}}
    files = {name: json.dumps(value).encode("utf-8") for name, value in entries.items()}
    manifest = {"format": "persona-cortex-persona", "format_version": format_version,
                "entries": [{"path": n, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
                            for n, d in files.items()]}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("manifest.json", json.dumps(manifest, allow_nan=True))
    return out.getvalue()


def _ai_revisions(texts: tuple[str, ...], messages: int) -> list[dict]:
    return [{"id": index, "filename": "memory.md", "author": "ai", "content": text,
             "created_at": f"2026-01-01T00:00:{index:02d}Z", "message_from": 1,
             "message_to": messages, "summary": "update"} for index, text in enumerate(texts, 1)]


def repetitive_memory(lines: int, step: int) -> str:
    """A memory of `lines` short lines drawn from 110 distinct ones in a `step`-dependent
    order: each repeats too rarely for difflib's autojunk (under 1 % of the lines), so a
    sequence diff of two such texts is quadratic in their lines (seconds at 7,000)."""
    return "".join(f"- f{(index * step) % 110}\n" for index in range(lines))


def upload(port: int, path: str, data: bytes, method: str = "POST",
           timeout: float = 120) -> tuple[int, dict]:
    """(status, JSON body) of a multipart upload of `data` as the field `file`, over real HTTP."""
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"upload.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    with closing(http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)) as conn:
        conn.request(method, path, body,
                     {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        response = conn.getresponse()
        raw = response.read()
        if response.getheader("Content-Type", "").startswith("application/json"):
            return response.status, json.loads(raw)
        return response.status, {"bytes": len(raw)}
