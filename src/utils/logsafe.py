"""Logging set-up that masks secrets in every record, whichever handler later sees it.

The registry is one per process even when this module is loaded twice, as `src.utils.logsafe`
and as `utils.logsafe` (seed-style code puts `src/` on `sys.path`): both copies share the state
kept on one anchor module, and only one masking factory is ever installed, so a key registered
through either name is masked in every record.
"""
import logging
import sys
import threading
import types

_ANCHOR = "_persona_cortex_logsafe"
_state = sys.modules.setdefault(_ANCHOR, types.ModuleType(_ANCHOR))
if not hasattr(_state, "secrets"):
    _state.secrets, _state.lock = set(), threading.Lock()
    _state.base_factory = logging.getLogRecordFactory()
_secrets: set[str] = _state.secrets
_lock: threading.Lock = _state.lock


def register_secret(secret: str | None) -> None:
    """Masks `secret` in all log records created from now on (ignored when too short)."""
    if secret and len(secret) >= 8:
        with _lock:
            _secrets.add(secret)


def _masking_factory(*args, **kwargs) -> logging.LogRecord:
    record = _state.base_factory(*args, **kwargs)
    if _secrets:
        message = record.getMessage()
        masked = message
        for secret in tuple(_secrets):
            masked = masked.replace(secret, "[redacted]")
        if masked != message:
            record.msg, record.args = masked, None
    return record


_masking_factory.persona_masking = True


def configure_logging(level: str = "INFO") -> None:
    """Installs the masking record factory and one stderr handler on the root logger."""
    if not getattr(logging.getLogRecordFactory(), "persona_masking", False):
        logging.setLogRecordFactory(_masking_factory)
    root = logging.getLogger()
    if not any(getattr(h, "persona_handler", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.persona_handler = True
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(str(level).upper())
