"""User personas, "About you" (docs/about-you.md)."""
from ..limits import USER_PERSONA_TEXT
from .common import (
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    path_param,
    ref,
)

_PARAM = path_param("upid", {"type": "integer", "minimum": 1}, "A user persona id.")
_FILE_FORM = {"required": True, "content": {"multipart/form-data": {"schema": obj(
    {"file": {"type": "string", "format": "binary"}}, required=("file",))}}}
_NAME = {"type": "string", "minLength": 1, "maxLength": USER_PERSONA_TEXT["name"],
         "description": "One line; `{{user}}` in prompts and cards."}
_DESCRIPTION = {"type": "string", "maxLength": USER_PERSONA_TEXT["description"],
                "description": "Who the person is; goes into the chat and memory prompts."}

SCHEMAS = {
    "UserPersona": obj({
        "id": {"type": "integer", "minimum": 1}, "name": _NAME, "description": _DESCRIPTION,
        "is_default": {"type": "boolean"},
        "avatar_url": nullable({"type": "string"}),
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
    }, required=("id", "name", "description", "is_default", "avatar_url", "created_at",
                 "updated_at")),
    "UserPersonaList": obj({
        "user_personas": {"type": "array", "items": ref("UserPersona"),
                          "description": "The default first."},
        "default_id": nullable({"type": "integer"}),
    }, required=("user_personas", "default_id")),
}


def paths() -> dict:
    """The user persona paths."""
    one = json_response("The user persona.", ref("UserPersona"))
    listed = json_response("Every user persona.", ref("UserPersonaList"))
    return {
        "/api/user-personas": {
            "get": operation("listUserPersonas", "personas",
                             "Every user persona (\"About you\"), the default first.",
                             {"200": listed}),
            "post": operation(
                "createUserPersona", "personas", "Create a user persona.",
                {"201": one, **errors("400", "409")}, write=True,
                description="The first one becomes the default; `is_default: true` makes a "
                            "later one the default. At most 200 (409 `too_many_user_personas`).",
                requestBody=json_body(obj({"name": _NAME, "description": _DESCRIPTION,
                                           "is_default": {"type": "boolean"}},
                                          required=("name",), additional=False))),
        },
        "/api/user-personas/default": {
            "put": operation(
                "setDefaultUserPersona", "personas", "Make a user persona the default.",
                {"200": listed, **errors("400", "404")}, write=True,
                requestBody=json_body(obj({"id": {"type": "integer", "minimum": 1}},
                                          required=("id",), additional=False))),
        },
        "/api/user-personas/{upid}": {
            "parameters": [_PARAM],
            "get": operation("getUserPersona", "personas", "One user persona.",
                             {"200": one, **errors("404")}),
            "patch": operation("updateUserPersona", "personas", "Change name or description.",
                               {"200": one, **errors("400", "404")}, write=True,
                               requestBody=json_body(obj({"name": _NAME,
                                                          "description": _DESCRIPTION},
                                                         additional=False))),
            "delete": operation(
                "deleteUserPersona", "personas", "Delete a user persona.",
                {"200": listed, **errors("404", "409")}, write=True,
                description="Conversations that used it follow the default again. The default "
                            "can be deleted only when it is the last one (else 409 "
                            "`default_user_persona`)."),
        },
        "/api/user-personas/{upid}/avatar": {
            "parameters": [_PARAM],
            "get": operation("getUserPersonaAvatar", "personas", "The user persona's avatar.",
                             {"200": {"description": "The picture.", "content": {
                                 m: {"schema": {"type": "string", "format": "binary"}}
                                 for m in ("image/png", "image/jpeg", "image/webp")}},
                              **errors("404")}),
            "put": operation("putUserPersonaAvatar", "personas",
                             "Set the avatar (PNG, JPEG or WebP; re-encoded, metadata dropped).",
                             {"200": one, **errors("400", "404", "413", "415")}, write=True,
                             requestBody=_FILE_FORM),
            "delete": operation("deleteUserPersonaAvatar", "personas", "Remove the avatar.",
                                {"200": one, **errors("404")}, write=True),
        },
    }
