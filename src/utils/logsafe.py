"""Logging set-up that masks secrets in every record, whichever handler later sees it."""
import logging
import threading

_secrets: set[str] = set()
_lock = threading.Lock()
_base_factory = logging.getLogRecordFactory()


def register_secret(secret: str | None) -> None:
    """Masks `secret` in all log records created from now on (ignored when too short)."""
    if secret and len(secret) >= 8:
        with _lock:
            _secrets.add(secret)


def _masking_factory(*args, **kwargs) -> logging.LogRecord:
    record = _base_factory(*args, **kwargs)
    if _secrets:
        message = record.getMessage()
        masked = message
        for secret in tuple(_secrets):
            masked = masked.replace(secret, "[redacted]")
        if masked != message:
            record.msg, record.args = masked, None
    return record


def configure_logging(level: str = "INFO") -> None:
    """Installs the masking record factory and one stderr handler on the root logger."""
    if logging.getLogRecordFactory() is not _masking_factory:
        logging.setLogRecordFactory(_masking_factory)
    root = logging.getLogger()
    if not any(getattr(h, "persona_handler", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.persona_handler = True
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(str(level).upper())
