"""The provider part of the settings: which endpoint, its base URL, its window, its model.

The flat fields (`provider`, `model`, `base_url`, `context_window`) always describe the current
provider, so every reader of the "app" settings sees the model in use. Switching provider
parks the old provider's three fields under `by_provider` and brings back the new one's, so
moving between Claude and a local model does not send a Claude model id to Ollama (or an
Ollama URL to Anthropic).
"""
import re
from urllib.parse import urlsplit

from ..api_request import PROVIDERS
from . import validation as check
from .errors import invalid

# Where each provider's requests go when no base URL is set (what the SDKs use by default).
OFFICIAL_URLS = {"anthropic": "https://api.anthropic.com",
                 "openai_compatible": "https://api.openai.com/v1"}
MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+\-]{0,199}$")
WINDOW = (512, 10_000_000)
PER_PROVIDER = ("model", "base_url", "context_window")


def validate(name: str, value):
    """The cleaned value of one provider field; a 400 `invalid` for anything else."""
    if name == "provider":
        if value not in PROVIDERS:
            raise invalid(name, f"must be one of {', '.join(PROVIDERS)}")
        return value
    if name == "model":
        return check.pattern(name, value, MODEL_RE, "must look like a model id (letters, digits "
                             "and . _ : / @ + -, up to 200 characters)")
    if name == "context_window":
        return None if value is None else check.integer(name, value, low=WINDOW[0], high=WINDOW[1])
    if name == "base_url":
        return base_url(value)
    raise invalid(name, "is not a provider field")


def base_url(value) -> str | None:
    """An http(s) URL without credentials or query, trailing slash removed; None clears it."""
    if value is None or value == "":
        return None
    url = check.text("base_url", value, max_len=500, single_line=True).strip()
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed or misplaced IPv6 bracket
        raise invalid("base_url", "must be an http:// or https:// URL, e.g. "
                                  "http://127.0.0.1:11434/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid("base_url", "must be an http:// or https:// URL, e.g. "
                                  "http://127.0.0.1:11434/v1")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise invalid("base_url", "must not contain credentials, a query or a fragment "
                                  "(put a key in the API key field)")
    try:
        parts.port  # noqa: B018 - raises for a port outside 0-65535 or not a number
    except ValueError:
        raise invalid("base_url", "has an invalid port (1 to 65535)") from None
    if parts.port == 0 or not _HOST_RE.fullmatch(parts.hostname) or \
            parts.netloc.lower() != _netloc(parts.hostname, parts.port):
        raise invalid("base_url", "has an invalid host or port")
    return url.rstrip("/")


def _netloc(host: str, port: int | None) -> str:
    """The host and port as they are written when nothing else is in between: urlsplit reads
    "[::1]x" as the host ::1 with no port, where an HTTP client fails on the "x" (a 500)."""
    host = f"[{host}]" if ":" in host else host
    return host if port is None else f"{host}:{port}"


# ASCII only: a case-blind [a-z] also takes "ſ", "K" (Kelvin) and "ı", which fold to letters
_HOST_RE = re.compile(r"^(\[[0-9a-f:.]+\]|[0-9a-f:]+|[a-z0-9]([a-z0-9._-]{0,251}[a-z0-9])?)$",
                      re.IGNORECASE | re.ASCII)


def endpoint(provider: str, url: str | None) -> str:
    """The canonical form of where requests go: None is the provider's official URL; scheme and
    host lower-cased, a default port dropped, no trailing slash. Keys are bound to this."""
    parts = urlsplit(url or OFFICIAL_URLS[provider])
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    port = parts.port
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) \
        else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def apply(stored: dict, cleaned: dict, current: str) -> dict:
    """The stored settings after `cleaned`, parking/restoring fields when the provider changes
    from `current`."""
    result = dict(stored)
    new = cleaned.get("provider")
    old = current
    if new is not None and new != old:
        parked = dict(result.get("by_provider") or {})
        parked[old] = {name: result.pop(name) for name in PER_PROVIDER
                                      if name in result}
        for name, value in (parked.pop(new, None) or {}).items():
            result[name] = value
        result["by_provider"] = parked
    result.update(cleaned)
    return result
