"""Logging set-up that masks secrets in every record, whichever handler later sees it.

Masked are: every registered secret (API keys, the access token) and every run of 8 or more
characters of one (an upstream error echoing `sk-ant-api03-SECRETKEY...7890` shows no part
of the key), credentials in query strings (`?token=…`, `api_key=…`, in gunicorn's access log
too) and `Bearer` values, whatever their length. The HTTP client libraries log whole request
bodies (the conversation and the cortex) at DEBUG, so they stay at INFO unless
`PERSONA_LOG_PROMPTS=1` asks for them.

The registry is one per process even when this module is loaded twice, as `src.utils.logsafe`
and as `utils.logsafe` (seed-style code puts `src/` on `sys.path`): both copies share the state
kept on one anchor module, and only one masking factory is ever installed, so a key registered
through either name is masked in every record.
"""
import logging
import re
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, Protocol, cast

FRAGMENT = 8
MASK = "[redacted]"
PROMPT_LOGGERS = ("anthropic", "openai", "httpx", "httpx2", "httpcore", "httpcore2")
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:access_token|token|api_key|apikey|key|password|secret|auth)=)[^&;\s\"']*")
_BEARER = re.compile(r"(?i)(\bbearer\s+)[^\s\"',;]+")
_ANCHOR = "_persona_cortex_logsafe"


class _Shared(Protocol):
    """What the anchor module holds for both copies of this module (set once, below)."""

    secrets: set[str]
    lock: threading.Lock
    base_factory: Callable[..., logging.LogRecord]
    fragments: dict[str, frozenset[str]]


_state = cast(_Shared, sys.modules.setdefault(_ANCHOR, types.ModuleType(_ANCHOR)))
if not hasattr(_state, "secrets"):
    _state.secrets, _state.lock = set(), threading.Lock()
    _state.base_factory = logging.getLogRecordFactory()
if not hasattr(_state, "fragments"):
    _state.fragments = {}  # every 8-character run of a secret -> the secrets holding it
_secrets: set[str] = _state.secrets
_lock: threading.Lock = _state.lock


def register_secret(secret: str | None) -> None:
    """Masks `secret` and its fragments in all log records created from now on (and in
    `mask_secrets`); ignored when shorter than 8 characters."""
    if not secret or len(secret) < FRAGMENT or secret in _secrets:
        return
    with _lock:
        _secrets.add(secret)
        fragments = dict(_state.fragments)
        for start in range(len(secret) - FRAGMENT + 1):
            run = secret[start:start + FRAGMENT]
            fragments[run] = fragments.get(run, frozenset()) | {secret}
        _state.fragments = fragments


def mask_secrets(text: str) -> str:
    """`text` with every run of 8 or more characters of a registered secret replaced."""
    fragments = _state.fragments
    if not fragments or len(text) < FRAGMENT:
        return text
    parts, start, i, end = [], 0, 0, len(text) - FRAGMENT
    while i <= end:
        owners = fragments.get(text[i:i + FRAGMENT])
        if owners is None:
            i += 1
            continue
        j = i + FRAGMENT
        while j < len(text) and any(text[i:j + 1] in secret for secret in owners):
            j += 1
        parts += [text[start:i], MASK]
        start = i = j
    parts.append(text[start:])
    return "".join(parts)


def mask_credentials(text: str) -> str:
    """Known secrets plus anything sent as a credential (query-string token, Bearer value)."""
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return mask_secrets(text)


def _masking_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    record = _state.base_factory(*args, **kwargs)
    try:
        message = record.getMessage()
    except Exception:  # a broken format string is the logging module's to report
        return record
    masked = mask_credentials(message)
    if masked != message:
        record.msg, record.args = masked, None
    return record


_masking_factory.persona_masking = True  # type: ignore[attr-defined]  # read by either copy


class _Handler(logging.StreamHandler):
    """The stderr handler `configure_logging` installs once (either copy finds its marker)."""

    persona_handler = True


def configure_logging(level: str = "INFO", log_prompts: bool = False) -> None:
    """Installs the masking record factory and one stderr handler on the root logger; the HTTP
    client loggers (which would print whole prompts at DEBUG) stay at INFO or quieter unless
    `log_prompts` (at WARNING they are as quiet as the rest: a line per upstream request costs
    CPU on every chat turn)."""
    known = logging.getLevelNamesMapping().get(str(level).upper())
    number = logging.INFO if known is None else known
    for name in PROMPT_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if log_prompts
                                         else max(logging.INFO, number))
    if not getattr(logging.getLogRecordFactory(), "persona_masking", False):
        logging.setLogRecordFactory(_masking_factory)
    root = logging.getLogger()
    if not any(getattr(h, "persona_handler", False) for h in root.handlers):
        handler = _Handler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(number)
    if known is None:
        logging.getLogger(__name__).warning(
            "Unknown log level %r (use DEBUG, INFO, WARNING, ERROR or CRITICAL); logging at INFO",
            str(level)[:40])
