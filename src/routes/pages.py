"""The HTML pages; everything dynamic happens in the static JS modules over the JSON API.

Pages send a strict Content-Security-Policy: scripts and styles only from our own origin (no
inline code at all), no plugins, no framing, and images only from us, so model output that slips
past the sanitiser still cannot run code or call out to another host. With access control on,
both pages offer a sign-out form (a plain POST, so no script is needed for it). `/api/docs` is
a page too (the interactive API reference), under the same policy and the same access gate.
"""
from typing import Any

from flask import Blueprint, render_template, request

from ..utils import i18n
from ..utils.provider import get_access_gate, get_settings_service

bp = Blueprint("pages", __name__)

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


THEMES = ("light", "dark")


@bp.app_context_processor
def theme() -> dict[str, str | None]:
    """The person's manual theme (a cookie set by the settings page); None follows the system."""
    chosen = request.cookies.get("theme")
    return {"theme": chosen if chosen in THEMES else None}


@bp.app_context_processor
def interface_language() -> dict[str, Any]:
    """The interface's language (the setting, else Accept-Language) and its strings: `t` and
    `tn` for templates, `ui_strings` embedded as JSON for the page's scripts."""
    chosen = get_settings_service().chosen_language()
    lang = i18n.choose(chosen, request.headers.get("Accept-Language"))
    return {"lang": lang, "language_chosen": chosen is not None, "ui_strings": i18n.catalogue(lang),
            "t": lambda key, **params: i18n.translate(lang, key, **params),
            "tn": lambda key, count, **params: i18n.plural(lang, key, count, **params)}


def _page(template: str, **context: Any) -> tuple[str, int, dict[str, str]]:
    response = render_template(template, access_control=get_access_gate().enabled, **context)
    return response, 200, SECURITY_HEADERS


@bp.get("/")
def chat() -> tuple[str, int, dict[str, str]]:
    """The chat page: personas and sessions on the left, the conversation on the right."""
    return _page("pages/chat.html", page="chat")


@bp.get("/settings")
def settings() -> tuple[str, int, dict[str, str]]:
    """The settings page: API key, model, personas and the cortex editor."""
    return _page("pages/settings.html", page="settings")


@bp.get("/api/docs")
def api_docs() -> tuple[str, int, dict[str, str]]:
    """The interactive API reference: the vendored Swagger UI renders /api/openapi.json."""
    return _page("pages/api_docs.html", page="api_docs")
