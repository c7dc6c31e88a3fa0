"""User personas, "About you" (docs/about-you.md)."""
from ..models import user_personas as u
from .common import FILE_FORM, PICTURE
from .table import Op

_ONE = "/api/user-personas/{upid}"
ROUTES = {"personas": (
    Op("get", "/api/user-personas", "Every user persona (\"About you\"), the default first.",
       u.UserPersonaList),
    Op("post", "/api/user-personas", "Create a user persona.", u.UserPersona,
       u.UserPersonaCreate, "400 409", "201", "At most 200 (409 `too_many_user_personas`)."),
    Op("put", "/api/user-personas/default", "Make a user persona the default.",
       u.UserPersonaList, u.DefaultChoice, "400 404"),
    Op("get", _ONE, "One user persona.", u.UserPersona, errors="404"),
    Op("patch", _ONE, "Change name or description.", u.UserPersona, u.UserPersonaPatch,
       "400 404"),
    Op("delete", _ONE, "Delete a user persona.", u.UserPersonaList, errors="404 409",
       description="Conversations that used it follow the default again. The default can be "
                   "deleted only when it is the last one (else 409 `default_user_persona`)."),
    Op("get", _ONE + "/avatar", "The user persona's avatar.", PICTURE, errors="404"),
    Op("put", _ONE + "/avatar", "Set the avatar (PNG, JPEG or WebP; re-encoded, metadata "
       "dropped).", u.UserPersona, FILE_FORM, "400 404 413 415"),
    Op("delete", _ONE + "/avatar", "Remove the avatar.", u.UserPersona, errors="404"),
)}
