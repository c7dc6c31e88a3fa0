"""A strict reader and writer of PNG chunks, for the text chunks that carry character cards.

Every chunk's CRC is checked, the file must end at IEND (bytes after it would make the file a
polyglot: a PNG to one reader and something else to another), and a text chunk may not exceed
TEXT_LIMIT, compressed or not, so a crafted file cannot make us inflate a bomb.
"""
import struct
import zlib
from collections.abc import Iterator

from .errors import invalid_card, too_large

SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXT_LIMIT = 4 * 1024 * 1024
MAX_CHUNKS = 100_000
_TEXT_TYPES = (b"tEXt", b"zTXt", b"iTXt")


def is_png(data: bytes) -> bool:
    """True when `data` starts with the PNG signature."""
    return data.startswith(SIGNATURE)


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """`(type, body)` of every chunk, checked; raises a 4xx for anything malformed."""
    if not is_png(data):
        raise invalid_card("not_png", "The file is not a PNG image.")
    found: list[tuple[bytes, bytes]] = []
    pos = len(SIGNATURE)
    while True:
        if len(found) >= MAX_CHUNKS:
            raise invalid_card("too_many_chunks", "The PNG has too many chunks.")
        if pos + 8 > len(data):
            raise invalid_card("truncated_png", "The PNG is truncated (it ends before IEND).")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 8 + length + 4
        if length > 0x7FFFFFFF or end > len(data):
            raise invalid_card("truncated_png", "The PNG is truncated (a chunk runs past the "
                               "end of the file).")
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise invalid_card("bad_crc", f"The PNG chunk {_shown(kind)} has a bad checksum "
                               "(the file is damaged).")
        found.append((kind, body))
        pos = end
        if kind == b"IEND":
            break
    if pos != len(data):
        raise invalid_card("polyglot", "The PNG has data after its end (IEND): a file that is "
                           "also something else is refused.")
    return found


def text_chunks(data: bytes, keywords: frozenset[str]) -> Iterator[tuple[str, str]]:
    """`(keyword, text)` of the tEXt, zTXt and iTXt chunks whose keyword (any case) is in
    `keywords`, in file order, each decoded only when the caller asks for the next: a 16 MiB
    file holds 4,000 zTXt chunks of 4 MiB inflated each, 16 GiB to inflate and hold if every
    one were read (other keywords are never decoded; a reader stops at the first duplicate)."""
    for kind, body in chunks(data):
        if kind in _TEXT_TYPES and _keyword(body).lower() in keywords:
            if len(body) > TEXT_LIMIT:
                raise too_large("chunk_too_large", f"A PNG text chunk is larger than "
                                f"{TEXT_LIMIT} bytes.")
            yield _decode_text(kind, body)


def with_text_chunks(data: bytes, texts: list[tuple[str, str]], drop: tuple[str, ...]) -> bytes:
    """The PNG `data` without text chunks named in `drop`, plus `texts` as tEXt before IEND."""
    out = [SIGNATURE]
    for kind, body in chunks(data):
        if kind in _TEXT_TYPES and _keyword(body).lower() in drop:
            continue
        if kind == b"IEND":
            out.extend(_chunk(b"tEXt", k.encode("latin-1") + b"\0" + t.encode("latin-1"))
                       for k, t in texts)
        out.append(_chunk(kind, body))
    return b"".join(out)


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I4s", len(body), kind) + body + struct.pack(">I", crc)


def _keyword(body: bytes) -> str:
    return body.split(b"\0", 1)[0].decode("latin-1")


def _decode_text(kind: bytes, body: bytes) -> tuple[str, str]:
    keyword, sep, rest = body.partition(b"\0")
    if not sep or not 1 <= len(keyword) <= 79:
        raise invalid_card("bad_text_chunk", f"A PNG {_shown(kind)} chunk is malformed.")
    name = keyword.decode("latin-1")
    if kind == b"tEXt":
        return name, rest.decode("latin-1")
    if kind == b"zTXt":
        if rest[:1] != b"\0":
            raise invalid_card("bad_text_chunk", "A PNG zTXt chunk uses an unknown compression.")
        return name, _inflate(rest[1:]).decode("latin-1")
    return name, _decode_itxt(rest)


def _decode_itxt(rest: bytes) -> str:
    if len(rest) < 2:
        raise invalid_card("bad_text_chunk", "A PNG iTXt chunk is malformed.")
    compressed, method, rest = rest[0], rest[1], rest[2:]
    parts = rest.split(b"\0", 2)
    if len(parts) != 3 or compressed not in (0, 1) or (compressed and method != 0):
        raise invalid_card("bad_text_chunk", "A PNG iTXt chunk is malformed.")
    text = _inflate(parts[2]) if compressed else parts[2]
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_card("invalid_utf8", "A PNG iTXt chunk is not valid UTF-8.") from None


def _inflate(data: bytes) -> bytes:
    """zlib-decompressed `data`, refusing more than TEXT_LIMIT bytes of output."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, TEXT_LIMIT + 1)
    except zlib.error:
        raise invalid_card("bad_compression", "A compressed PNG text chunk is damaged.") from None
    if len(out) > TEXT_LIMIT or inflater.unconsumed_tail:
        raise too_large("chunk_too_large", f"A compressed PNG text chunk expands to more than "
                        f"{TEXT_LIMIT} bytes.")
    return out


def _shown(kind: bytes) -> str:
    return kind.decode("latin-1") if kind.isalpha() else repr(kind)
