"""The dates SillyTavern writes into chats, read as our stored timestamps (`clock.py`).

SillyTavern has written `send_date` in several ways over the years (its own reader is
`parseTimestamp` in public/scripts/utils.js): epoch milliseconds (a number or a string of
digits), "June 19, 2023 2:20pm" (`getMessageTimeStamp`), "2024-7-12@01h31m37s"
(`humanizedDateTime`), "2024-6-5 @14h 56m 50s 682ms" (`humanizedISO8601DateTime`), and ISO 8601
strings (ours and other tools'). Only the ISO form carries a zone; the others are the writer's
local time, which the file does not record, so they are read as UTC (as SillyTavern itself reads
the humanized forms). Anything else is None and the caller falls back (docs/chat-import.md).
"""
import math
import re
from datetime import UTC, datetime

_MONTHS = {name: number for number, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), start=1)}
_MERIDIEM = re.compile(r"([A-Za-z]+)\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{1,2})\s*([ap]m)",
                       re.IGNORECASE)
_HUMANIZED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})\s*@(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s"
                        r"(?:\s*(\d{1,3})ms)?")
_DIGITS = re.compile(r"\d{1,16}")
_EARLIEST, _LATEST = 946684800000, 4102444800000  # 2000-01-01 .. 2100-01-01, in milliseconds


def parse_date(value: object) -> str | None:
    """`value` as `YYYY-MM-DDTHH:MM:SS.mmmZ`, or None when it is no date we know."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _from_millis(value)
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if _DIGITS.fullmatch(text):
        return _from_millis(int(text))
    return _iso(text) or _meridiem(text) or _humanized(text)


def _stamp(moment: datetime) -> str | None:
    """The stored form of `moment` (naive: UTC), or None outside 2000-2100: every form gets the
    window epoch values have, so a far date cannot sort a chat's messages oddly, a year below
    1000 cannot print without its leading zeros, and one at the ends of Python's calendar
    cannot overflow when moved to UTC."""
    try:
        moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except OverflowError:
        return None
    if not _EARLIEST <= moment.timestamp() * 1000 < _LATEST:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _from_millis(millis: float) -> str | None:
    if math.isnan(millis) or not _EARLIEST <= millis < _LATEST:
        return None
    return _stamp(datetime.fromtimestamp(millis / 1000, UTC))


def _iso(text: str) -> str | None:
    if not re.match(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text):
        return None
    try:
        return _stamp(datetime.fromisoformat(text))
    except ValueError:
        return None


def _meridiem(text: str) -> str | None:
    match = _MERIDIEM.fullmatch(text)
    if not match or match[1].lower() not in _MONTHS:
        return None
    hour = int(match[4]) % 12 + (12 if match[6].lower() == "pm" else 0)
    return _built(int(match[3]), _MONTHS[match[1].lower()], int(match[2]), hour, int(match[5]))


def _humanized(text: str) -> str | None:
    match = _HUMANIZED.fullmatch(text)
    if not match:
        return None
    parts = [int(part) for part in match.groups()[:6]]
    millis = int(match[7]) if match[7] else 0
    return _built(*parts, micro=millis * 1000)


def _built(year: int, month: int, day: int, hour: int, minute: int, second: int = 0, *,
           micro: int = 0) -> str | None:
    try:
        return _stamp(datetime(year, month, day, hour, minute, second, micro))
    except ValueError:
        return None
