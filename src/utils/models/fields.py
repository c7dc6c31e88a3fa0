"""Reusable field types: text rules (trimmed single lines, no control characters) and URLs.

Each is an `Annotated` type whose checks run in pydantic, so the schema in the OpenAPI
document and the check the server runs come from the same declaration.
"""
import ipaddress
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator

from ..text import is_encodable
from .base import rule_error

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAK = re.compile(r"[\r\n\u2028\u2029]")
# ASCII only: a case-blind [a-z] also takes "ſ", "K" (Kelvin) and "ı", which fold to letters.
# A name is dot-separated labels of 1 to 63 characters (what the IDNA codec resolves: "a..b"
# or a longer label raised UnicodeError inside the HTTP client, reported as the server's error).
_LABEL = r"[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"^(\[[0-9a-f:.]+\]|[0-9a-f:]+|(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*)$",
                   re.IGNORECASE | re.ASCII)
# httpx reads a host of four dotted numbers as an IPv4 address and refuses it unless each is a
# decimal 0-255 without leading zeros ("0177.0.0.1" would be octal elsewhere): a 500 later
_IPV4_STYLE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$", re.ASCII)
MODEL_ID = r"^[A-Za-z0-9][A-Za-z0-9._:/@+\-]{0,199}$"
ONE_LINE = "^[^\r\n\u2028\u2029]*$"


def _strip(value: Any) -> Any:
    """Single-line text is trimmed before its length is judged (non-strings pass through)."""
    return value.strip() if isinstance(value, str) else value


def _one_line(value: str) -> str:
    if _LINE_BREAK.search(value):
        raise rule_error("must be a single line")
    return _no_control(value)


def _no_control(value: str) -> str:
    if not is_encodable(value):
        raise rule_error("must be valid Unicode text (no lone surrogates)")
    if _CONTROL.search(value):
        raise rule_error("must not contain control characters")
    return value


# A trimmed single line without control characters (names, titles); length via `Field`.
Line = Annotated[str, BeforeValidator(_strip), AfterValidator(_one_line)]
# Free text (tab and line breaks allowed) without other control characters.
Text = Annotated[str, AfterValidator(_no_control)]


def check_base_url(value: str | None) -> str | None:
    """An http(s) URL without credentials or query, trailing slash removed; "" clears it."""
    if not value:
        return None
    url = _one_line(value.strip())
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed or misplaced IPv6 bracket
        raise rule_error("must be an http:// or https:// URL, e.g. "
                         "http://127.0.0.1:11434/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise rule_error("must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise rule_error("must not contain credentials, a query or a fragment (put a key in "
                         "the API key field)")
    try:
        parts.port  # noqa: B018 - raises for a port outside 0-65535 or not a number
    except ValueError:
        raise rule_error("has an invalid port (1 to 65535)") from None
    if parts.port == 0 or not _HOST.fullmatch(parts.hostname) or \
            not _address_or_name(parts.hostname) or \
            parts.netloc.lower() != _netloc(parts.hostname, parts.port):
        raise rule_error("has an invalid host or port")
    return url.rstrip("/")


def _address_or_name(host: str) -> bool:
    """A host of four dotted numbers is a valid IPv4 address (as httpx requires)."""
    if not _IPV4_STYLE.fullmatch(host):
        return True
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def _netloc(host: str, port: int | None) -> str:
    """The host and port as they are written when nothing else is in between: urlsplit reads
    "[::1]x" as the host ::1 with no port, where an HTTP client fails on the "x" (a 500)."""
    host = f"[{host}]" if ":" in host else host
    return host if port is None else f"{host}:{port}"


BaseUrl = Annotated[str | None, AfterValidator(check_base_url)]
