"""JSON errors for every path: `{"error": {"code", "message"}}` with the right status, never HTML."""
import logging
from typing import TypeVar

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from ..utils.cooperative import Busy
from ..utils.cortex.errors import PersonaNotFound
from ..utils.models import Body, Invalid, parse
from ..utils.services.errors import ServiceError
from ..utils.services.validation import encodable_json

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Body)

# Routes and services raise the same error type (services cannot import Flask, so it lives
# there); one app-wide handler turns it into the JSON response.
ApiError = ServiceError


def error_response(status: int, code: str, message: str, **extra):
    """Builds the standard JSON error response."""
    body = {"error": {"code": code, "message": message, **extra}}
    return jsonify(body), status


def json_body(required: bool = True) -> dict:
    """The request's JSON object; anything else (a form post, bad JSON, a list, a string that
    is not encodable text anywhere in it) is a 4xx."""
    if not request.is_json:
        if not required and not request.get_data():
            return {}
        raise ApiError(415, "unsupported_media_type",
                       "Send the request body as JSON (Content-Type: application/json).")
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        data = None
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "The request body must be a JSON object.")
    return encodable_json(data)


def body(model: type[M], required: bool = True) -> M:
    """The request's JSON object validated as `model` (a 4xx naming the field otherwise)."""
    return parse(model, json_body(required))


def register_error_handlers(app: Flask) -> None:
    """Turns ApiError, HTTP errors and unexpected exceptions into JSON responses."""

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError):
        return error_response(err.status, err.code, err.message, **err.extra)

    @app.errorhandler(Invalid)
    def _invalid(err: Invalid):
        return error_response(400, err.code, err.message, field=err.field)

    @app.errorhandler(PersonaNotFound)
    def _persona_gone(err: PersonaNotFound):
        return error_response(404, "persona_not_found", "No persona with that id.")

    @app.errorhandler(Busy)
    def _busy(err: Busy):
        response, status = error_response(
            503, "server_busy", "The server is busy with other uploads, backups or exports: "
            "try again in a few seconds.", retry_after=err.retry_after)
        response.headers["Retry-After"] = str(err.retry_after)
        return response, status

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException):
        code = (err.name or "error").lower().replace(" ", "_")
        return error_response(err.code or 500, code, err.description or err.name)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        log.error("Unhandled error on %s %s", request.method, request.path, exc_info=err)
        return error_response(500, "internal_error", "Something went wrong on the server.")
