"""Where a request comes from and where it was sent to: Origin and Host checks (DESIGN §9).

A browser names the page that made a request in `Origin`; it must be the origin the request was
addressed to (scheme, host and port). Behind a reverse proxy that terminates TLS, the proxy's
`X-Forwarded-Proto` and `X-Forwarded-Host` name that origin too. Trusting them widens nothing a
hostile page can use: a browser lets a page set those headers only after a CORS preflight, which
this app never answers, and a WebSocket handshake cannot carry them at all.
"""
import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit

Origin = tuple[str, str, int]
DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_origin(value: str | None) -> Origin | None:
    """`(scheme, host, port)` of an Origin header, or None for "null" and anything malformed."""
    if not value or any(ch.isspace() for ch in value):
        return None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def own_origins(scheme: str, host: str | None, forwarded_proto: str | None = None,
                forwarded_host: str | None = None) -> set[Origin]:
    """The origins a request was addressed to: its scheme and Host, and a proxy's view of them."""
    schemes = {scheme.lower()} | {_first(forwarded_proto).lower()}
    hosts = {host or ""} | {_first(forwarded_host)}
    found = set()
    for name in hosts:
        for each in schemes & set(DEFAULT_PORTS):
            origin = parse_origin(f"{each}://{name}") if name else None
            if origin is not None:
                found.add(origin)
    return found


def is_own_origin(origin: str | None, own: set[Origin]) -> bool:
    """True when the Origin header names one of `own`."""
    parsed = parse_origin(origin)
    return parsed is not None and parsed in own


@lru_cache(maxsize=64)
def is_loopback_host(host: str | None) -> bool:
    """True when a Host header names this machine: localhost or a loopback address (every
    request asks, about a handful of names: the answers are kept)."""
    if not host:
        return False
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return False
    return name is not None and is_loopback(name)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (a bare host name or address, no port)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _first(header: str | None) -> str:
    """The first entry of a comma-separated forwarding header (the one the client reached)."""
    return (header or "").split(",")[0].strip()
