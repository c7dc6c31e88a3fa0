"""Signing in with the access token (DESIGN §9; src/routes/access.py).

Only matters when `PERSONA_ACCESS_TOKEN` is set; API clients can instead send
`Authorization: Bearer <token>` with every request.
"""
from ...routes import access
from ..models import errors, settings as s
from .table import Op, model_ref, query

_PAGE = {"text/html": {"schema": {"type": "string"}}}
_ERROR = {"application/json": {"schema": model_ref(errors.Error)}, **_PAGE}
_TEXT = {"schema": {"type": "string"}}
_COOKIE = {"Set-Cookie": {**_TEXT,
                          "description": "The sign-in cookie (HttpOnly, SameSite=Strict)."}}
_REDIRECT = {"description": "A form post (or no token configured): redirect.",
             "headers": {"Location": _TEXT}}
_FORM = {"required": True, "content": {mime: {"schema": model_ref(s.SignIn, "validation")}
         for mime in ("application/json", "application/x-www-form-urlencoded")}}
ROUTES = {"access": (
    Op(access.signin_form, {"description": "The page.", "content": _PAGE}, more={"303": _REDIRECT},
       extra={"guards": ("403",)}, params=(query("next"),)),
    Op(access.sign_in, s.SignedIn, _FORM, "400 404", headers=_COOKIE,
       extra={"guards": ("403", "413", "415")},
       more={"303": {**_REDIRECT, "headers": {"Location": _TEXT, **_COOKIE}},
             "401": {"description": "Not the access token.", "content": _ERROR},
             "429": {"description": "Too many failed attempts: wait `Retry-After` seconds.",
                     "headers": {"Retry-After": _TEXT}, "content": _ERROR}}),
    Op(access.sign_out, s.SignedIn, more={"303": _REDIRECT}, extra={"guards": ("403", "413")}),
)}
