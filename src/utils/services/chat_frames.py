"""What a chat WebSocket frame must be before any handler sees it (DESIGN §6, README "Chat").

A frame is one text message holding a JSON object whose `type` is one of the known strings, and
every key and string in it is encodable text. Anything else (binary, oversized, not JSON, not an
object, a `type` that is a list or an object, a lone surrogate anywhere) is a `FrameError` whose
message says what to send instead; the socket then answers with an `error` event and reads on.
"""

from ..text import first_unencodable, strict_json
from .validation import UNENCODABLE

FRAME_MAX = 40_000
TYPES = ("chat", "regenerate", "continue", "resume", "stop", "subscribe")
_EXPECTED = ("Send a JSON object whose type is chat, regenerate, continue, resume, stop or "
             "subscribe.")


class FrameError(ValueError):
    """A frame the socket cannot act on; `field` names the offending field when there is one."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def parse_frame(raw: str | bytes) -> dict:
    """The frame as a JSON object with a known `type`; FrameError for anything else."""
    if not isinstance(raw, str):
        raise FrameError("Binary frames are not accepted. " + _EXPECTED)
    if len(raw) > FRAME_MAX:
        raise FrameError(f"A frame may hold at most {FRAME_MAX} characters.")
    try:
        frame = strict_json(raw)
    except (ValueError, RecursionError):
        raise FrameError("The frame is not valid JSON. " + _EXPECTED) from None
    if not isinstance(frame, dict):
        raise FrameError(_EXPECTED)
    bad = first_unencodable(frame)
    if bad is not None:
        raise FrameError(f"{bad}: {UNENCODABLE}", bad)
    kind = frame.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        raise FrameError(_EXPECTED, "type")
    return frame
