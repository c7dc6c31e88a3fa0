"""Failures a service reports on purpose; routes turn them into `{"error": {...}}` responses.

Services never import Flask, so they raise these instead of the routes' ApiError.
"""
import re
from collections.abc import Callable
from typing import Any

_PLAIN_ID = re.compile(r"[a-z0-9]{1,32}")


class ServiceError(Exception):
    """A failure the caller can act on, with the HTTP status and stable code it maps to."""

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra

    def __reduce__(self) -> tuple[Callable[..., "ServiceError"], tuple[Any, ...]]:
        """Pickles with all its parts (a refusal crosses from the heavy-work process)."""
        return _rebuild, (type(self), self.status, self.code, self.message, self.extra)


def _rebuild(kind: type, status: int, code: str, message: str, extra: dict) -> ServiceError:
    return kind(status, code, message, **extra)


def not_found(what: str, ident: object) -> ServiceError:
    """404 for an unknown persona, session, …; the id is repeated only if it looks like one."""
    if isinstance(ident, str) and _PLAIN_ID.fullmatch(ident):
        return ServiceError(404, f"{what}_not_found", f"No {what} with the id '{ident}'.")
    return ServiceError(404, f"{what}_not_found", f"No such {what}.")


def invalid(field: str, rule: str) -> ServiceError:
    """400 naming the field and the rule it broke."""
    return ServiceError(400, "validation_error", f"{field}: {rule}", field=field)
