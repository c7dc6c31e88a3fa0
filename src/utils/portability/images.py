"""Avatars: any accepted picture is decoded and re-encoded by Pillow, never stored as sent.

Only PNG, JPEG and WebP are accepted, recognised by their first bytes and by Pillow agreeing.
The pixel count is checked from the header before any pixel is decoded (`check_header`, cheap
enough for the event loop, then Pillow's own reading of the size): an image bomb is refused at
its size, not after filling memory or seconds of inflating. MAX_PIXELS is what an avatar needs
(a 4096×4096 photo), not what Pillow could survive. Decoding and re-encoding is CPU work that
callers run off the event loop (`cooperative.offload`). The result is capped at MAX_SIDE pixels
a side and carries no metadata (EXIF, text chunks, ICC profiles are not copied).
"""
import base64
import hashlib
import io
import warnings

from PIL import Image, ImageOps

from .errors import invalid_image, too_large
from .image_header import dimensions

MAX_BYTES = 16 * 1024 * 1024
MAX_PIXELS = 16 * 1024 * 1024
MAX_SIDE = 1024
MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp"}


def sniff(data: bytes) -> str | None:
    """'PNG', 'JPEG' or 'WEBP' from the magic bytes, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def check_header(data: bytes) -> str:
    """The picture's kind ('PNG', 'JPEG', 'WEBP') after the checks that need no decoding: its
    size in bytes, its format, and the pixel count its header declares; a 4xx if refused."""
    if len(data) > MAX_BYTES:
        raise too_large("image_too_large", f"The picture is larger than {MAX_BYTES} bytes.")
    kind = sniff(data)
    if kind is None:
        raise invalid_image("unsupported_format", "The picture must be a PNG, JPEG or WebP image "
                            "(SVG and other formats are not accepted).")
    declared = dimensions(data, kind)
    if declared is not None:
        _check_size(declared)
    return kind


def reencode(data: bytes) -> dict:
    """`{mime, data, sha256, width, height}` of a safe copy of the picture; a 4xx if refused."""
    kind = check_header(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with Image.open(io.BytesIO(data), formats=[kind]) as image:
                _check_size(image.size)
                image.load()
                return _encode(ImageOps.exif_transpose(image), kind)
        except Image.DecompressionBombError:
            raise too_large("image_bomb", f"The picture has more than {MAX_PIXELS} pixels.") \
                from None
        except (OSError, ValueError, SyntaxError, EOFError) as err:
            raise invalid_image("undecodable", f"The picture could not be read "
                                f"({type(err).__name__}).") from None


def data_url(image: dict) -> str:
    """A re-encoded picture as a `data:` URL (for previews)."""
    return f"data:{image['mime']};base64,{base64.b64encode(image['data']).decode('ascii')}"


def placeholder(name: str) -> bytes:
    """A plain square PNG for a card export of a persona without an avatar."""
    shade = int(hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:6], 16)
    color = ((shade >> 16) & 0xFF, (shade >> 8) & 0xFF, shade & 0xFF)
    out = io.BytesIO()
    Image.new("RGB", (256, 256), color).save(out, "PNG")
    return out.getvalue()


def to_png(data: bytes) -> bytes:
    """A stored avatar as PNG (card PNG exports need a PNG to carry the chunks)."""
    if sniff(data) == "PNG":
        return data
    with Image.open(io.BytesIO(data), formats=["JPEG", "WEBP"]) as image:
        out = io.BytesIO()
        image.save(out, "PNG")
        return out.getvalue()


def _check_size(size: tuple[int, int]) -> None:
    width, height = size
    if width < 1 or height < 1:
        raise invalid_image("undecodable", "The picture has no pixels.")
    if width * height > MAX_PIXELS:
        raise too_large("image_bomb", f"The picture has {width}×{height} pixels; at most "
                        f"{MAX_PIXELS} pixels are accepted.")


def _encode(image: Image.Image, kind: str) -> dict:
    keep_alpha = kind != "JPEG" and ("A" in image.getbands() or "transparency" in image.info)
    clean = image.convert("RGBA" if keep_alpha else "RGB")
    clean.thumbnail((MAX_SIDE, MAX_SIDE))
    out = io.BytesIO()
    if kind == "JPEG":
        clean.save(out, "JPEG", quality=90, optimize=True)
    elif kind == "WEBP":
        clean.save(out, "WEBP", quality=90)
    else:
        clean.save(out, "PNG", optimize=True)
    data = out.getvalue()
    return {"mime": MIME[kind], "data": data, "sha256": hashlib.sha256(data).hexdigest(),
            "width": clean.width, "height": clean.height}
