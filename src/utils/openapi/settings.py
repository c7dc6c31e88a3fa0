"""Settings, the API key, the health probe and this document itself."""
from ..limits import SETTINGS_RANGES, SETTINGS_TEXT
from .common import errors, json_body, json_response, nullable, obj, operation, ref

_LANGUAGE = {"type": "string", "enum": ["en", "de"]}
_EFFORT = {"enum": [None, "low", "medium", "high", "xhigh", "max"]}
_PROVIDER = {"enum": ["anthropic", "openai_compatible"],
             "description": "`anthropic` (Messages API) or `openai_compatible` (Chat Completions: "
                            "Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, OpenAI). Default: "
                            "`PERSONA_PROVIDER`, else `anthropic`."}
_FIELDS = {
    "model": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$",
              "description": "The model id of the current provider (each provider keeps its own)."},
    "provider": _PROVIDER,
    "base_url": nullable({"type": "string", "format": "uri", "maxLength": 500,
                          "description": "http(s) URL without credentials, e.g. "
                                         "`http://127.0.0.1:11434/v1`. For `anthropic` it "
                                         "overrides `ANTHROPIC_BASE_URL`; for "
                                         "`openai_compatible` the default is `OPENAI_BASE_URL`."}),
    "context_window": nullable({"type": "integer", "minimum": 512, "maximum": 10_000_000,
                                "description": "The endpoint's context window in tokens; null = "
                                               "the provider default (200000 / 8192). History is "
                                               "trimmed to fit, never the persona or memory."}),
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
    "Limits": obj(dict.fromkeys(("persona", "settings", "cortex_settings", "session", "message", "search"), _FORM),
                  required=("persona", "settings", "cortex_settings", "session", "message", "search"),
                  description="One source of truth: the services validate with these limits."),
    "ApiKeyStatus": obj({
        "configured": {"type": "boolean"},
        "last4": nullable({"type": "string", "minLength": 4, "maxLength": 4}),
        "source": {"enum": ["settings", "environment", None]},
    }, required=("configured", "last4", "source"),
        description="The key itself is never returned."),
    "Settings": obj({**_FIELDS, "api_key": ref("ApiKeyStatus"),
                     "is_ready": {"type": "boolean", "description": "Chat can be used: a key "
                                  "is configured, or an OpenAI-compatible base URL (local "
                                  "endpoints need no key)."},
                     "providers": obj({name: ref("ProviderMemory") for name in
                                       ("anthropic", "openai_compatible")},
                                      description="What each provider would use once chosen.")},
                    required=(*_FIELDS, "api_key", "is_ready", "providers")),
    "ProviderMemory": obj({"base_url": nullable({"type": "string"}),
                           "model": nullable({"type": "string"}),
                           "context_window": nullable({"type": "integer"}),
                           "api_key": ref("ApiKeyStatus")},
                          required=("base_url", "model", "context_window", "api_key"),
                          description="A provider's own base URL, model, window and the status "
                                      "of the key that belongs to that URL."),
    "ModelList": obj({"provider": _PROVIDER,
                      "models": {"type": "array", "items": {"type": "string"}},
                      "error": obj({"code": {"type": "string"}, "message": {"type": "string"}},
                                   required=("code", "message"))},
                     required=("provider", "models")),
    "ConnectionTest": obj({
        "provider": _PROVIDER, "base_url": nullable({"type": "string", "maxLength": 500}),
        "api_key": nullable({"type": "string", "maxLength": 512, "writeOnly": True}),
        "model": {"type": "string"}}, additional=False,
        description="Fields left out come from the settings. Without `api_key` the key that "
                    "belongs to the URL probed is sent (none if none does); a `base_url` whose "
                    "provider has a key saved for another URL needs `api_key` (null: probe "
                    "without a key), else `409 key_bound_to_url`."),
    "ConnectionReport": obj({
        "reachable": {"type": "boolean"},
        "models": {"type": "array", "items": {"type": "string"}},
        "model": nullable({"type": "string", "description": "The model tested: the one given, "
                                                            "else the one chats use, else the "
                                                            "first listed."}),
        "tools": obj({"non_streaming": {"type": "boolean"}, "streaming": {"type": "boolean"}},
                     required=("non_streaming", "streaming"),
                     description="Whether a forced tool call came back (memory updates need "
                                 "the non-streaming one, or the JSON edit-plan fallback)."),
        "context_window": nullable({"type": "integer", "description": "When the endpoint "
                                    "reveals it (vLLM, llama.cpp, OpenRouter, LM Studio)."}),
        "error": obj({"code": {"type": "string"}, "message": {"type": "string"}},
                     required=("code", "message")),
    }, required=("reachable", "models", "tools", "context_window")),
    "SettingsUpdate": obj({**_FIELDS, "api_key": nullable({
        "type": "string", "minLength": 16, "maxLength": 512, "writeOnly": True,
        "description": "The key for the `base_url` in the same request (checked there, then "
                       "stored bound to it), or null to use that URL without a key."})},
        additional=False,
        description="A partial update; all fields valid or nothing is written. A saved key "
                    "is sent only to the URL it was saved for: a new `base_url` for a provider "
                    "with a key needs `api_key` too, else `409 key_bound_to_url`."),
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
                             {"200": settings, **errors("400", "409", "502", "503")},
                             write=True, requestBody=json_body(ref("SettingsUpdate"))),
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
                                                       "writeOnly": True},
                                           "provider": _PROVIDER},
                                          required=("api_key",), additional=False,
                                          description="`provider` defaults to the current one; "
                                                      "an OpenAI-compatible key is checked "
                                                      "with `GET /models`."))),
            "delete": operation("deleteApiKey", "settings",
                                "Remove the stored key (the environment's key applies again).",
                                {"200": key_status, **errors("400")}, write=True,
                                parameters=[{"name": "provider", "in": "query", "required": False,
                                             "schema": _PROVIDER,
                                             "description": "Whose key (default: current)."}]),
        },
        "/api/settings/test-connection": {
            "post": operation(
                "testConnection", "settings",
                "Probe an endpoint: reachable, models, tool calls, context window.",
                {"200": json_response("What was found; a failed probe is still 200 with "
                                      "`error`.", ref("ConnectionReport")),
                 **errors("400", "409")},
                write=True, requestBody=json_body(ref("ConnectionTest")),
                description="Follows no redirect, reports our own error words (at most the "
                            "far side's HTTP status) and ends within 10 s."),
        },
        "/api/settings/models": {
            "get": operation(
                "listModels", "settings", "The models the saved endpoint lists (`/models`).",
                {"200": json_response("The ids; a failed listing is still 200 with `error`.",
                                      ref("ModelList")), **errors("400")},
                parameters=[{"name": "provider", "in": "query", "required": False,
                             "schema": _PROVIDER, "description": "Whose (default: current)."}]),
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
