"""Signing in with the access token (DESIGN §9; src/routes/access.py).

Only matters when `PERSONA_ACCESS_TOKEN` is set; API clients can instead send
`Authorization: Bearer <token>` with every request.
"""
from typing import Any

from .common import errors, json_response, obj, operation

_SIGNED_IN = obj({"signed_in": {"type": "boolean"}}, required=("signed_in",))
_PAGE = {"text/html": {"schema": {"type": "string"}}}
_REDIRECT: dict[str, Any] = {"description": "A form post (or no token configured): redirect.",
             "headers": {"Location": {"schema": {"type": "string"}}}}
_COOKIE = {"Set-Cookie": {"schema": {"type": "string"},
                          "description": "The sign-in cookie (HttpOnly, SameSite=Strict)."}}

SCHEMAS = {
    "SignIn": obj({"token": {"type": "string", "writeOnly": True},
                   "next": {"type": "string", "description": "Form posts: where to go next."}},
                  required=("token",)),
}


def paths() -> dict:
    """The sign-in page, sign-in and sign-out."""
    return {
        "/signin": {
            "get": operation(
                "signInPage", "access", "The sign-in page (HTML).",
                {"200": {"description": "The page.", "content": _PAGE}, "303": _REDIRECT},
                guards=("403",),
                parameters=[{"name": "next", "in": "query", "required": False,
                             "schema": {"type": "string"}}]),
            "post": operation(
                "signIn", "access", "Check the token and set the sign-in cookie.",
                {"200": json_response("Signed in.", _SIGNED_IN, headers=_COOKIE),
                 "303": {**_REDIRECT, "headers": {**_REDIRECT["headers"], **_COOKIE}},
                 "401": {"description": "Not the access token.", "content": {
                     "application/json": {"schema": {"$ref": "#/components/schemas/Error"}},
                     **_PAGE}},
                 "429": {"description": "Too many failed attempts: wait `Retry-After` seconds.",
                         "headers": {"Retry-After": {"schema": {"type": "string"}}},
                         "content": {"application/json": {
                             "schema": {"$ref": "#/components/schemas/Error"}}, **_PAGE}},
                 **errors("400", "404")},
                guards=("403", "413", "415"),
                description="JSON `{token}` answers JSON; the page's form post "
                            "(`application/x-www-form-urlencoded`) answers with a redirect or "
                            "the page. `404 sign_in_disabled` without an access token.",
                requestBody={"required": True, "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/SignIn"}},
                    "application/x-www-form-urlencoded": {
                        "schema": {"$ref": "#/components/schemas/SignIn"}}}}),
        },
        "/signout": {
            "post": operation(
                "signOut", "access", "Clear the sign-in cookie.",
                {"200": json_response("Signed out (JSON requests).", _SIGNED_IN),
                 "303": _REDIRECT}, guards=("403", "413"),
                description="Any body is ignored; a JSON request (or `Accept: application/json`) "
                            "gets JSON, anything else a redirect to /signin."),
        },
    }
