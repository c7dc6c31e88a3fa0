"""Settings, the API key, the health probe and this document itself."""
from .common import errors, json_body, json_response, nullable, obj, operation, ref

_LANGUAGE = {"type": "string", "enum": ["en", "de"]}
_EFFORT = {"enum": [None, "low", "medium", "high", "xhigh", "max"]}
_FIELDS = {
    "model": {"type": "string", "pattern": "^[a-z0-9][a-z0-9.-]{1,63}$"},
    "effort": _EFFORT,
    "max_tokens": {"type": "integer", "minimum": 1, "maximum": 64000},
    "context_limit": {"type": "integer", "minimum": 4, "maximum": 400,
                      "description": "Messages of both roles sent as history."},
    "language": _LANGUAGE,
    "user_name": {"type": "string", "maxLength": 80},
}

SCHEMAS = {
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
