"""Hostile uploads refused over real HTTP (issue 21): pictures by the size their header declares,
Letta files whose blocks are not a list, archives of an unknown format version, zips whose entry
list is over the cap. Each is a clear 4xx and changes nothing."""
import json
import math
import sqlite3
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import closing

import pytest

from src.utils.cooperative import HEAVY_QUEUE, HEAVY_THREADS
from src.utils.portability.images import MAX_PIXELS
from tests.robustness.hostile_uploads import (
    chunk,
    many_entry_zip,
    persona_archive,
    upload,
    zero_card_png,
    zero_png,
    zip_entries,
)
from tests.robustness.servers import ServerProcess

IMPORT = "/api/personas/import"
BATCHES = 5  # rounds of uploads at the cap the heavy-queue test may send to fill the queue


@pytest.fixture(scope="module")
def gevent_server(tmp_path_factory):
    """The production model (`python -m src.app`, one gevent worker, its heavy-work child)."""
    path = tmp_path_factory.mktemp("uploads")
    (path / "data").mkdir()
    with ServerProcess(path / "data", path / "server.log", PERSONA_WORKERS="1") as served:
        yield served


@pytest.fixture
def persona_count(data_dir):
    def count() -> int:
        with closing(sqlite3.connect(data_dir / "app.db")) as conn:
            return conn.execute("SELECT COUNT(*) FROM personas").fetchone()[0]
    return count


def _persona(server) -> str:
    status, body = upload(server.port, IMPORT, json.dumps(
        {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Pic"}}).encode())
    assert status == 201, body
    return body["id"]


def _refused(answer, status: int, reason: str) -> None:
    got, body = answer
    assert got == status, body
    assert body["error"]["reason"] == reason, body


def test_a_small_png_declaring_a_huge_canvas_is_refused_from_its_header(server, persona_count):
    """137 KiB of zeros declaring 6000×6000 (36 M pixels, under the old 40 M cap): refused,
    as a card and as an avatar, before a pixel is inflated."""
    before = persona_count()
    _refused(upload(server.port, IMPORT, zero_card_png()), 413, "image_bomb")
    assert persona_count() == before
    pid = _persona(server)
    _refused(upload(server.port, f"/api/personas/{pid}/avatar", zero_png(6000, 6000), "PUT"),
             413, "image_bomb")


def test_a_picture_over_the_cap_is_refused_from_its_header_even_with_the_heavy_queue_full(
        gevent_server):
    """The declared size is judged before a heavy-work turn is asked for: with every turn
    of the one gevent worker taken by pictures at the cap (an upload more is `503
    server_busy`), a 6000×6000 PNG, as an avatar or as a card (the card is its picture), is
    still `413 image_bomb`, neither queued behind them nor refused as busy."""
    port = gevent_server.port
    avatar = f"/api/personas/{_persona(gevent_server)}/avatar"
    at_cap = zero_png(4096, 4096)
    answers = []
    with ThreadPoolExecutor(HEAVY_THREADS + HEAVY_QUEUE + 2) as pool:
        for _ in range(BATCHES):  # a loaded machine may send a batch too slowly to fill it
            busy = [pool.submit(upload, port, avatar, at_cap, "PUT")
                    for _ in range(HEAVY_THREADS + HEAVY_QUEUE + 2)]
            answers += busy
            if any(done.result()[0] == 503 for done in as_completed(busy)):
                break  # refused as busy: the queue is full now, the rest still in it
        else:
            pytest.fail(f"no batch of {len(busy)} uploads filled the heavy-work queue")
        _refused(upload(port, IMPORT, zero_card_png()), 413, "image_bomb")
        _refused(upload(port, avatar, zero_png(6000, 6000), "PUT"), 413, "image_bomb")
    assert {f.result()[0] for f in answers} <= {200, 503}


def test_only_the_card_text_chunks_of_a_png_are_inflated(server, persona_count):
    """A 16 MiB PNG holds 4,000 zTXt chunks that inflate to 4 MiB each: 16 GiB (and as much
    memory) if every text chunk were read. Only `ccv3` and `chara` are: a chunk under any other
    keyword is never inflated, so a damaged one does not even refuse the card (the picture is
    re-encoded without it)."""
    card = zero_card_png(16, 16)
    junk = chunk(b"zTXt", b"Comment\0\0" + b"not zlib at all")
    status, body = upload(server.port, IMPORT, card[:33] + junk + card[33:])
    assert status == 201, body


def test_a_second_card_chunk_refuses_the_png_before_any_further_one_is_inflated(server):
    """4,000 `chara` chunks would be the same 16 GiB: the second one refuses the file, and the
    damaged third is never reached."""
    card = zero_card_png(16, 16)
    again = chunk(b"zTXt", b"chara\0\0" + zlib.compress(b"e30="))
    broken = chunk(b"zTXt", b"chara\0\0" + b"not zlib at all")
    at = card.index(b"IDAT") - 4  # after the card's own `chara` chunk
    _refused(upload(server.port, IMPORT, card[:at] + again + broken + card[at:]), 400,
             "duplicate_chunk")


def test_the_pixel_cap_is_what_an_avatar_needs(server):
    pid = _persona(server)
    side = math.isqrt(MAX_PIXELS)
    assert MAX_PIXELS == 4096 * 4096 == side * side
    _refused(upload(server.port, f"/api/personas/{pid}/avatar", zero_png(side + 1, side), "PUT"),
             413, "image_bomb")
    status, body = upload(server.port, f"/api/personas/{pid}/avatar", zero_png(640, 480), "PUT")
    assert status == 200 and body["avatar_url"], body


def test_a_zip_listing_too_many_entries_is_refused_from_its_end_record(server, persona_count):
    """150,000 entries, the last record broken: a parse of the list (3 s of Python) would end
    with `bad_zip` there; the end record's count refuses the file before that."""
    before = persona_count()
    _refused(upload(server.port, IMPORT, many_entry_zip(150_000, broken_at=149_999)), 413,
             "too_many_entries")
    assert persona_count() == before


def test_a_zip_whose_end_record_understates_its_entries_is_still_refused(server):
    """The end record claims 2 entries; the directory holds 1,500 records (the CHARX cap is
    1,000): counted by their signatures before zipfile parses them (the broken 1,200th would
    stop a parse with `bad_zip`)."""
    data = bytearray(many_entry_zip(1_500, broken_at=1_200))
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<2H", data, eocd + 8, 2, 2)
    _refused(upload(server.port, IMPORT, bytes(data)), 413, "too_many_entries")


def _lying_zip(kind: str) -> bytes:
    """1,500 entries (the CHARX cap is 1,000) whose end records claim 2 and hide where the
    directory is: the record at 1,200 is broken, so a parse of the list would stop there with
    `bad_zip`; a refusal before any parse says `too_many_entries`."""
    local, directory = zip_entries(1_500, broken_at=1_200)
    start, size = len(local), len(directory)
    fake64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 2, 2, 52, 0)
    plain = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 2, 2, 52, start, 0)
    marked = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                         0xFFFFFFFF, 0)
    if kind == "offset-past-the-end":
        return local + directory + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 2, 2, size,
                                               0x7FFF0000, 0)
    real64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 2, 2, size, start)
    if kind == "zip64-behind-a-plain-end":
        locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, start + size, 1)
        return local + directory + real64 + locator + plain
    # the locator names a harmless zip64 record; zipfile reads the one right before it
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, start, 1)
    return local + fake64 + directory + real64 + locator + marked


@pytest.mark.parametrize("kind", ["offset-past-the-end", "zip64-behind-a-plain-end",
                                  "locator-elsewhere"])
def test_a_zip_whose_end_records_hide_its_directory_is_refused_before_parsing(server, kind):
    """The directory is judged where zipfile will read it (the zip64 record right before the
    end record whenever a locator is there, the list ending at the end record), not where the
    records say it is."""
    _refused(upload(server.port, IMPORT, _lying_zip(kind)), 413, "too_many_entries")


def test_a_letta_file_whose_blocks_are_not_a_list_is_refused(server, persona_count):
    before = persona_count()
    document = {"agents": [{"name": "Blocky", "block_ids": ["b1"]}],
                "blocks": {"b1": {"label": "memory", "value": "Sam likes tea."}}}
    _refused(upload(server.port, IMPORT, json.dumps(document).encode()), 400, "bad_blocks")
    document = {"agents": [{"name": "Blocky", "core_memory": {"label": "memory"}}]}
    _refused(upload(server.port, IMPORT, json.dumps(document).encode()), 400, "bad_blocks")
    assert persona_count() == before


@pytest.mark.parametrize("version", [float("nan"), 99999, True, 1.0, "1", None])
def test_an_archive_of_an_unknown_format_version_is_refused(server, persona_count, version):
    before = persona_count()
    _refused(upload(server.port, IMPORT, persona_archive(4, format_version=version)), 400,
             "bad_manifest")
    assert persona_count() == before


def test_an_archive_of_the_known_format_version_is_imported(server, persona_count):
    before = persona_count()
    status, body = upload(server.port, IMPORT, persona_archive(4))
    assert status == 201 and body["name"] == "Archived", body
    assert persona_count() == before + 1
