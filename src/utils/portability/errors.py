"""The importers' refusals: one code per kind of file problem, each with a reason to act on."""
from ..services.errors import ServiceError

MAX_UPLOAD = 16 * 1024 * 1024
MAX_CARD_JSON = 2 * 1024 * 1024


def invalid_card(reason: str, message: str) -> ServiceError:
    """400 `invalid_card`: the file is not a card we can read; `reason` is a stable sub-code."""
    return ServiceError(400, "invalid_card", message, reason=reason)


def too_large(reason: str, message: str) -> ServiceError:
    """413 `too_large`: the file, a chunk or an entry is over one of the stated limits."""
    return ServiceError(413, "too_large", message, reason=reason)


def invalid_image(reason: str, message: str) -> ServiceError:
    """400 `invalid_image`: an avatar that is not a PNG, JPEG or WebP we can decode safely."""
    return ServiceError(400, "invalid_image", message, reason=reason)


def invalid_archive(reason: str, message: str) -> ServiceError:
    """400 `invalid_archive`: a persona archive or backup that fails its checks."""
    return ServiceError(400, "invalid_archive", message, reason=reason)


def known_version(value: object, known: tuple[int, ...]) -> bool:
    """True when a manifest's `format_version` is one of `known`: an integer, not a bool, a
    float (`1.0`, `NaN`) or a string, so only files written in a known format are read."""
    return type(value) is int and value in known


def invalid_chat(reason: str, message: str) -> ServiceError:
    """400 `invalid_chat`: a chat file we cannot import; `reason` is a stable sub-code."""
    return ServiceError(400, "invalid_chat", message, reason=reason)
