"""The provider part of the settings: which endpoint, its base URL, its window, its model.

The flat fields (`provider`, `model`, `base_url`, `context_window`) always describe the current
provider, so every reader of the "app" settings sees the model in use. Switching provider
parks the old provider's three fields under `by_provider` and brings back the new one's, so
moving between Claude and a local model does not send a Claude model id to Ollama (or an
Ollama URL to Anthropic). The fields' checks are `models.settings.SettingsPatch`.
"""
from functools import lru_cache
from urllib.parse import urlsplit

# Where each provider's requests go when no base URL is set (what the SDKs use by default).
OFFICIAL_URLS = {"anthropic": "https://api.anthropic.com",
                 "openai_compatible": "https://api.openai.com/v1"}
PER_PROVIDER = ("model", "base_url", "context_window")


@lru_cache(maxsize=64)
def endpoint(provider: str, url: str | None) -> str:
    """The canonical form of where requests go: None is the provider's official URL; scheme and
    host lower-cased, a default port dropped, no trailing slash. Keys are bound to this. A pure
    function of its two strings, asked twice before every request (`KeyRing.key_for`): the
    last few answers are kept (a URL that raises is not)."""
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
