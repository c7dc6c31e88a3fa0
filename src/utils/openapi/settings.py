"""Settings, the API key, the health probe and this document itself."""
from ..models.settings import (
    ApiKeyAnswer,
    ApiKeyBody,
    ConnectionReport,
    ConnectionTest,
    Limits,
    ModelList,
    Settings,
    SettingsPatch,
)
from .table import Op, table_paths

_PROVIDER = ({"name": "provider", "in": "query", "required": False,
              "schema": {"enum": ["anthropic", "openai_compatible"]},
              "description": "Whose (default: the current provider)."},)
SETTINGS = (
    Op("get", "/api/settings", "The settings and the API key status.", Settings),
    Op("put", "/api/settings", "Change any of the settings.", Settings, SettingsPatch,
       "400 409 502 503"),
    Op("put", "/api/settings/api-key", "Check a key with one small upstream call, then store it.",
       ApiKeyAnswer, ApiKeyBody, "400 502 503",
       description="A key the API rejects: `400 invalid_api_key`. If the check itself fails "
                   "(rate limit, overload, network): 503 or 502, nothing stored."),
    Op("delete", "/api/settings/api-key",
       "Remove the stored key (the environment's key applies again).", ApiKeyAnswer,
       errors="400", params=_PROVIDER),
    Op("post", "/api/settings/test-connection",
       "Probe an endpoint: reachable, models, tool calls, context window.", ConnectionReport,
       ConnectionTest, "400 409", description="Follows no redirect, reports our own error "
       "words (at most the far side's HTTP status) and ends within 10 s."),
    Op("get", "/api/settings/models", "The models the saved endpoint lists (`/models`).",
       ModelList, errors="400", params=_PROVIDER),
)
META = (
    Op("get", "/api/limits", "The input limits the server checks.", Limits),
    Op("get", "/healthz", "Liveness probe (needs no access token).",
       "Serving: `{\"status\": \"ok\"}`.", extra={"guards": ("403",)}),
    Op("get", "/api/openapi.json", "This document (Open API 3.1).", "The document."),
)


def paths() -> dict:
    """The settings, health and document paths."""
    return {**table_paths("settings", SETTINGS), **table_paths("meta", META)}
