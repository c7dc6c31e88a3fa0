"""JSON errors for every path: `{"error": {"code", "message"}}` with the right status, never HTML."""
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from ..utils.cooperative import Busy, TooSlow
from ..utils.cortex.errors import (
    CortexSizeError,
    InvalidContent,
    InvalidFilename,
    InvalidPersonaId,
    PersonaNotFound,
    ProposalConflict,
    ProposalDecided,
    ProposalNotFound,
    RevisionConflict,
    RevisionNotFound,
    UnsafePath,
)
from ..utils.models import Body, Invalid, parse
from ..utils.services.errors import ServiceError
from ..utils.services.validation import encodable_json
from ..utils.text import strict_json

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Body)

# Routes and services raise the same error type (services cannot import Flask, so it lives
# there); one app-wide handler turns it into the JSON response.
ApiError = ServiceError
# A JSON error as views and handlers return it: the response and its status.
ErrorAnswer = tuple[Response, int]


def error_response(status: int, code: str, message: str, **extra: Any) -> ErrorAnswer:
    """Builds the standard JSON error response."""
    body = {"error": {"code": code, "message": message, **extra}}
    return jsonify(body), status


def json_body(required: bool = True) -> dict[str, Any]:
    """The request's JSON object; anything else (a form post, bad JSON, a list, a string that
    is not encodable text anywhere in it) is a 4xx."""
    if not request.is_json:
        if not required and not request.get_data():
            return {}
        raise ApiError(415, "unsupported_media_type",
                       "Send the request body as JSON (Content-Type: application/json).")
    try:
        data = strict_json(request.get_data(cache=True))
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "The request body must be a JSON object.")
    return encodable_json(data)


# The domain errors services raise, each with its one HTTP answer: (status, code, extra fields).
DOMAIN_ERRORS: dict[type[Exception], tuple[int, str, Callable[[Any], dict]]] = {
    InvalidPersonaId: (404, "persona_not_found", lambda err: {}),
    InvalidFilename: (404, "cortex_file_not_found", lambda err: {}),
    UnsafePath: (400, "unsafe_path", lambda err: {}),
    InvalidContent: (400, "invalid_content", lambda err: {}),
    CortexSizeError: (413, "cortex_file_too_large",
                      lambda err: {"chars": err.chars, "limit": err.limit}),
    RevisionConflict: (412, "revision_conflict", lambda err: {"current": err.current.model_dump(mode="json")}),
    RevisionNotFound: (404, "revision_not_found", lambda err: {}),
    ProposalNotFound: (404, "proposal_not_found", lambda err: {}),
    ProposalDecided: (409, "proposal_decided", lambda err: {}),
    ProposalConflict: (409, "proposal_conflict", lambda err: {"files": err.files}),
}


def domain_error_response(err: Exception) -> ErrorAnswer:
    """The JSON answer for a domain error of `DOMAIN_ERRORS` (a revision conflict also names
    the current revision as its ETag)."""
    status, code, extra = next(DOMAIN_ERRORS[kind] for kind in type(err).__mro__
                               if kind in DOMAIN_ERRORS)
    response, status = error_response(status, code, str(err), **extra(err))
    if isinstance(err, RevisionConflict):
        response.set_etag(str(err.current.revision))
    return response, status


def body(model: type[M], required: bool = True) -> M:
    """The request's JSON object validated as `model` (a 4xx naming the field otherwise)."""
    return parse(model, json_body(required))


def register_error_handlers(app: Flask) -> None:
    """Turns ApiError, HTTP errors and unexpected exceptions into JSON responses."""

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError) -> ErrorAnswer:
        return error_response(err.status, err.code, err.message, **err.extra)

    for kind in DOMAIN_ERRORS:
        app.register_error_handler(kind, domain_error_response)

    @app.errorhandler(Invalid)
    def _invalid(err: Invalid) -> ErrorAnswer:
        return error_response(400, err.code, err.message, field=err.field)

    @app.errorhandler(PersonaNotFound)
    def _persona_gone(err: PersonaNotFound) -> ErrorAnswer:
        return error_response(404, "persona_not_found", "No persona with that id.")

    @app.errorhandler(Busy)
    def _busy(err: Busy) -> ErrorAnswer:
        response, status = error_response(
            503, "server_busy", "The server is busy with other uploads, backups or exports: "
            "try again in a few seconds.", retry_after=err.retry_after)
        response.headers["Retry-After"] = str(err.retry_after)
        return response, status

    @app.errorhandler(TooSlow)
    def _too_slow(err: TooSlow) -> ErrorAnswer:
        return error_response(
            503, "work_timeout", f"This took the server longer than {err.seconds:g} s and was "
            "stopped: the file or the data is too large or too complex to process.")

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException) -> ErrorAnswer:
        code = (err.name or "error").lower().replace(" ", "_")
        return error_response(err.code or 500, code, err.description or err.name)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> ErrorAnswer:
        log.error("Unhandled error on %s %s", request.method, request.path, exc_info=err)
        return error_response(500, "internal_error", "Something went wrong on the server.")
