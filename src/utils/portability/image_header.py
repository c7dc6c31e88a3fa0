"""A picture's width and height from its first bytes, before any decoder sees it.

Reading a header is a few dozen byte comparisons, cheap enough for the event loop, so a picture
over the pixel cap is refused before it is queued for decoding (a small PNG can declare a huge
canvas of zeros that takes seconds to inflate). A JPEG is walked marker by marker up to its
frame header, at most MAX_SEGMENTS segments; when a header cannot be read here the decoder's
own size check (made before it decodes a pixel) still applies.
"""
import struct

MAX_SEGMENTS = 256
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def dimensions(data: bytes, kind: str) -> tuple[int, int] | None:
    """`(width, height)` declared by a 'PNG', 'JPEG' or 'WEBP' header, or None if not found."""
    if kind == "PNG":
        return _png(data)
    if kind == "JPEG":
        return _jpeg(data)
    if kind == "WEBP":
        return _webp(data)
    return None


def _png(data: bytes) -> tuple[int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    pos = 2
    for _ in range(MAX_SEGMENTS):
        while pos < len(data) and data[pos] == 0xFF:  # markers may be padded with 0xFF
            pos += 1
        if pos + 3 > len(data):
            return None
        marker, length = data[pos], struct.unpack(">H", data[pos + 1:pos + 3])[0]
        if marker in _JPEG_FRAMES:
            if pos + 8 > len(data):
                return None
            height, width = struct.unpack(">HH", data[pos + 4:pos + 8])
            return width, height
        if marker in (0xD9, 0xDA) or length < 2:  # end of image or start of scan: no frame
            return None
        pos += 1 + length
        if pos >= len(data) or data[pos] != 0xFF:
            return None
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None
