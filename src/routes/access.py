"""Access control for every request (DESIGN §9), hooked into the whole app by this blueprint.

Before any view runs, each request passes four checks, in this order:
1. Host: without an access token the app answers only to localhost, so a hostile page cannot
   reach it through DNS rebinding (its requests would carry the attacker's host name).
2. Origin: WebSocket upgrades and POST/PUT/PATCH/DELETE from another site are refused (403), so
   a hostile page cannot act with the person's cookie or lock them out by failing sign-ins. Our
   pages send `Referrer-Policy: no-referrer`, under which browsers send `Origin: null` on their
   own POSTs; "null" passes only together with the browser's own `Sec-Fetch-Site: same-origin`.
3. Token: with `ACCESS_TOKEN` set, every request but /healthz, the sign-in page and its assets
   carries it (`Authorization: Bearer`, or the cookie /signin sets); wrong ones are rate-limited.
4. Size: a body over MAX_CONTENT_LENGTH (8 KB for the routes open without the token) is refused
   with 413 before anything reads it.
Nothing before the token check reads the body or touches the database, so requests without
the token cost no more than their headers; wrong tokens are counted in SQLite (see access.py).
"""
import logging
from urllib.parse import quote

from flask import Blueprint, current_app, jsonify, redirect, render_template, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from ..utils.provider import get_access_gate, get_failure_limiter
from ..utils.services import origins
from ..utils.services.access import COOKIE_MAX_AGE, COOKIE_NAME
from .errors import ErrorAnswer, error_response, json_body
from .pages import SECURITY_HEADERS
from .portability import UPLOAD_ENDPOINTS

log = logging.getLogger(__name__)
bp = Blueprint("access", __name__)
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
OPEN_ENDPOINTS = frozenset({"health.healthz", "access.signin_form", "access.sign_in",
                            "access.sign_out"})
SIGNIN_ASSETS = frozenset({"css/base.css", "css/signin.css", "js/signin.js", "img/icon.svg"})
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")
OPEN_BODY_LIMIT = 8192


@bp.record_once
def _limit_websocket_messages(state: BlueprintSetupState) -> None:
    """A WebSocket message larger than the body limit closes the socket (1009) unbuffered."""
    limit = state.app.config.get("MAX_CONTENT_LENGTH")
    state.app.config.setdefault("SOCK_SERVER_OPTIONS", {"max_message_size": limit})


@bp.before_app_request
def guard() -> ErrorAnswer | BaseResponse | None:
    """Runs the host, origin, token and size checks; the first refusal is the response."""
    return _check_host() or _check_origin() or _check_token() or _check_size()


@bp.app_errorhandler(RequestEntityTooLarge)
def _payload_too_large(err: RequestEntityTooLarge) -> ErrorAnswer:
    return _too_large()


@bp.get("/signin")
def signin_form() -> ResponseReturnValue:
    """The sign-in page (HTML)."""
    gate = get_access_gate()
    if not gate.enabled:
        return redirect("/", 303)
    signed_in = gate.cookie_matches(request.cookies.get(COOKIE_NAME))
    return _page(signed_in=signed_in, next_path=_safe_next(request.args.get("next")))


@bp.post("/signin")
def sign_in() -> ResponseReturnValue:
    """Check the token and set the sign-in cookie.

    JSON `{token}` answers JSON; the page's form post (`application/x-www-form-urlencoded`) answers
    with a redirect or the page. `404 sign_in_disabled` without an access token.
    """
    gate, limiter, client = get_access_gate(), get_failure_limiter(), _client()
    if not gate.enabled:
        return error_response(404, "sign_in_disabled",
                              "No access token is configured, so there is nothing to sign in to.")
    as_form = request.mimetype in _FORMS
    wait = limiter.retry_after(client)  # before the body is read: a locked-out guess costs little
    if wait is not None:
        if as_form:
            return _page(error=("signin.error.wait", {"seconds": wait}), next_path=_safe_next(request.args.get("next")),
                         status=429, headers={"Retry-After": str(wait)})
        return _too_many(wait)
    data = request.form if as_form else json_body()
    next_path = _safe_next(data.get("next")) if as_form else "/"
    if not gate.token_matches(data.get("token")):
        limiter.record_failure(client)
        log.warning("Failed sign-in from %s", client)
        if as_form:
            return _page(error=("signin.error.wrong_token", {}), next_path=next_path,
                                 status=401)
        return error_response(401, "invalid_token", "That is not the access token.")
    response = redirect(next_path, 303) if as_form else jsonify({"signed_in": True})
    response.set_cookie(COOKIE_NAME, gate.cookie_value(), max_age=COOKIE_MAX_AGE, path="/",
                        secure=_is_https(), httponly=True, samesite="Strict")
    log.info("Signed in from %s", client)
    return response


@bp.post("/signout")
def sign_out() -> BaseResponse:
    """Clear the sign-in cookie.

    Any body is ignored; a JSON request (or `Accept: application/json`) gets JSON, anything else a
    redirect to /signin.
    """
    response = (jsonify({"signed_in": False}) if request.is_json or _wants_json()
                else redirect("/signin", 303))
    _clear_cookie(response)
    return response


def _safe_next(value: object) -> str:
    """A local path to return to after signing in; anything that could leave the site is "/"."""
    if not isinstance(value, str) or not value.startswith("/") \
            or value.startswith(("//", "/signin")) \
            or len(value) > 2000 or any(ch == "\\" or ord(ch) < 0x21 for ch in value):
        return "/"
    return value


def _check_host() -> ErrorAnswer | None:
    if get_access_gate().enabled or origins.is_loopback_host(request.host):
        return None
    log.warning("Refused a request addressed to host %.100r", request.host)
    return error_response(403, "forbidden_host",
                          "Without an access token this server answers only to localhost. To use "
                          "it from other machines, set PERSONA_ACCESS_TOKEN (docs/security.md).")


def _check_origin() -> ErrorAnswer | None:
    upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
    if request.method not in STATE_CHANGING and not upgrade:
        return None
    site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    if site not in ("cross-site", "same-site") and (
            origin is None or origins.is_own_origin(origin, _own_origins())
            or (origin == "null" and site == "same-origin")):
        return None
    log.warning("Refused %s %s from origin %.100r", request.method, request.path, origin)
    return error_response(403, "forbidden_origin",
                          "This request came from another site, so it was refused.")


def _check_token() -> ErrorAnswer | BaseResponse | None:
    gate = get_access_gate()
    if not gate.enabled or _is_open():
        return None
    cookie = request.cookies.get(COOKIE_NAME)
    if cookie is not None and gate.cookie_matches(cookie):
        return None
    authorization = request.headers.get("Authorization")
    if authorization is None and cookie is None:
        return _unauthorized("unauthorized", "Sign in first: send the access token as "
                             "'Authorization: Bearer <token>' or sign in at /signin.")
    limiter, client = get_failure_limiter(), _client()
    wait = limiter.retry_after(client)
    if wait is None and authorization is not None and gate.token_matches(_bearer(authorization)):
        return None
    if wait is None:
        limiter.record_failure(client)
        log.warning("Rejected credentials from %s for %s %s", client, request.method,
                    request.path)
        response = _unauthorized("invalid_token", "The access token (or sign-in cookie) is "
                                 "not valid: sign in again.")
    else:
        response = _unauthorized("too_many_attempts", _wait_message(wait)) if _is_page() \
            else _too_many(wait)
    if cookie is not None:
        _clear_cookie(response)
    return response


def _check_size() -> ErrorAnswer | None:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if request.endpoint in UPLOAD_ENDPOINTS:
        limit = request.max_content_length = current_app.config["MAX_UPLOAD_LENGTH"]
    if _is_open():  # reachable without the token: a sign-in needs a few hundred bytes
        limit = min(limit or OPEN_BODY_LIMIT, OPEN_BODY_LIMIT)
        request.max_content_length = limit
    if not limit:
        return None
    if request.content_length is not None:
        return _too_large() if request.content_length > limit else None
    # A chunked body: werkzeug stops reading at the limit without saying whether more
    # followed, so one more byte from the raw input tells a cut-off body from a full one.
    if request.environ.get("wsgi.input_terminated") \
            and len(request.get_data(cache=True)) >= limit \
            and request.environ["wsgi.input"].read(1):
        return _too_large()
    return None


def _is_open() -> bool:
    if request.endpoint in OPEN_ENDPOINTS:
        return True
    return request.endpoint == "static" and \
        (request.view_args or {}).get("filename") in SIGNIN_ASSETS


def _is_page() -> bool:
    return request.blueprint == "pages" and request.method in ("GET", "HEAD")


def _unauthorized(code: str, message: str) -> BaseResponse:
    if _is_page():
        target = request.full_path if request.query_string else request.path
        response = redirect(f"/signin?next={quote(target, safe='/')}", 303)
    else:
        response, _ = error_response(401, code, message)
        response.status_code = 401
        response.headers["WWW-Authenticate"] = 'Bearer realm="Persona Cortex"'
    return response


def _too_many(wait: int) -> BaseResponse:
    response, _ = error_response(429, "too_many_attempts", _wait_message(wait), retry_after=wait)
    response.status_code = 429
    response.headers["Retry-After"] = str(wait)
    return response


def _too_large() -> ErrorAnswer:
    limit = request.max_content_length or current_app.config.get("MAX_CONTENT_LENGTH")
    return error_response(413, "payload_too_large",
                          f"The request body is too large: at most {limit} bytes are accepted.",
                          limit=limit)


def _wait_message(wait: int) -> str:
    return f"Too many failed attempts from your address: try again in {wait} seconds."


def _own_origins() -> set[origins.Origin]:
    headers = request.headers
    return origins.own_origins(request.scheme, request.host,
                               headers.get("X-Forwarded-Proto"), headers.get("X-Forwarded-Host"))


def _bearer(authorization: str) -> str | None:
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _client() -> str:
    return request.remote_addr or "unknown"


def _is_https() -> bool:
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return request.is_secure or forwarded == "https"


def _wants_json() -> bool:
    accept = request.accept_mimetypes
    return accept.best_match(["application/json", "text/html"]) == "application/json"


def _clear_cookie(response: BaseResponse) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", secure=_is_https(), httponly=True,
                           samesite="Strict")


def _page(*, signed_in: bool = False, error: tuple[str, dict] | None = None,
          next_path: str = "/", status: int = 200,
          headers: dict[str, str] | None = None) -> tuple[str, int, dict[str, str]]:
    """The sign-in page with the strict headers every page sends; `error` is a catalogue key
    and its parameters, shown in the interface's language."""
    html = render_template("pages/signin.html", page="signin", signed_in=signed_in, error=error,
                           next_path=next_path)
    return html, status, {**SECURITY_HEADERS, **(headers or {})}
