"""Settings, the API key, the health probe and this document itself."""
from ..limits import SETTINGS_RANGES, SETTINGS_TEXT
from .common import errors, json_body, json_response, nullable, obj, operation, ref

_LANGUAGE = {"type": "string", "enum": ["en", "de"]}
_EFFORT = {"enum": [None, "low", "medium", "high", "xhigh", "max"]}
_FIELDS = {
    "model": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]{1,63}$"},
    "effort": _EFFORT,
    "max_tokens": {"type": "integer", "minimum": SETTINGS_RANGES["max_tokens"][0],
                   "maximum": SETTINGS_RANGES["max_tokens"][1]},
    "context_limit": {"type": "integer", "minimum": SETTINGS_RANGES["context_limit"][0],
                      "maximum": SETTINGS_RANGES["context_limit"][1],
                      "description": "Messages of both roles sent as history."},
    "language": _LANGUAGE,
    "user_name": {"type": "string", "maxLength": SETTINGS_TEXT["user_name"]},
}

_LIMIT = obj({"min": {"type": "integer"}, "max": {"type": "integer"},
              "min_length": {"type": "integer"}, "max_length": {"type": "integer"}})
_FORM = {"type": "object", "additionalProperties": _LIMIT}

SCHEMAS = {
    "Limits": obj({name: _FORM for name in
                   ("persona", "settings", "cortex_settings", "session", "message", "search")},
                  required=("persona", "settings", "cortex_settings", "session", "message", "search"),
                  description="One source of truth: the services validate with these limits."),
    "ApiKeyStatus": obj({
        "configured": {"type": "boolean"},
        "last4": nullable({"type": "string", "minLength": 4, "maxLength": 4}),
        "source": {"enum": ["settings", "environment", None]},
    }, required=("configured", "last4", "source"),
        description="The key itself is never returned."),
    "Settings": obj({**_FIELDS, "api_key": ref("ApiKeyStatus")},
                    required=(*_FIELDS, "api_key")),
    "SettingsUpdate": obj(_FIELDS, additional=False,
                          description="A partial update; all fields valid or nothing is written."),
}


def paths() -> dict:
    """The settings, health and document paths."""
    settings = json_response("The settings, defaults filled in.", ref("Settings"))
    key_status = json_response("The key's status.", obj({"api_key": ref("ApiKeyStatus")},
                                                        required=("api_key",)))
    return {
        "/api/settings": {
            "get": operation("readSettings", "settings", "The settings and the API key status.",
                             {"200": settings}),
            "put": operation("writeSettings", "settings", "Change any of the settings.",
                             {"200": settings, **errors("400")}, write=True,
                             requestBody=json_body(ref("SettingsUpdate"))),
        },
        "/api/settings/api-key": {
            "put": operation(
                "setApiKey", "settings", "Check a key with one small upstream call, then store it.",
                {"200": key_status, **errors("400", "502", "503")}, write=True,
                description="A key the API rejects: `400 invalid_api_key`. If the check itself "
                            "fails (rate limit, overload, network): 503 or 502, nothing stored.",
                requestBody=json_body(obj({"api_key": {"type": "string", "minLength": 16,
                                                       "maxLength": 512,
                                                       "pattern": "^[\\x21-\\x7e]+$",
                                                       "writeOnly": True}},
                                          required=("api_key",), additional=False))),
            "delete": operation("deleteApiKey", "settings",
                                "Remove the stored key (the environment's key applies again).",
                                {"200": key_status, **errors("400")}, write=True),
        },
        "/api/limits": {
            "get": operation("readLimits", "meta", "The input limits the server checks.", {
                "200": json_response("Per form, per field: `min`/`max` for numbers, "
                                     "`min_length`/`max_length` for text.", ref("Limits"))}),
        },
        "/healthz": {
            "get": operation("healthz", "meta", "Liveness probe (needs no access token).", {
                "200": json_response("Serving.", obj({"status": {"const": "ok"}},
                                                     required=("status",)))},
                guards=("403",)),
        },
        "/api/openapi.json": {
            "get": operation("openapi", "meta", "This document (Open API 3.1).", {
                "200": json_response("The document.", obj({"openapi": {"type": "string"}},
                                                          required=("openapi",)))}),
        },
    }
