"""Settings, the API key, the health probe and this document itself."""
from ..models import settings as s
from .table import Op

_PROVIDER = ({"name": "provider", "in": "query", "required": False,
              "schema": {"enum": ["anthropic", "openai_compatible"]},
              "description": "Whose (default: the current provider)."},)
ROUTES = {"settings": (
    Op("get", "/api/settings", "The settings and the API key status.", s.Settings),
    Op("put", "/api/settings", "Change any of the settings.", s.Settings, s.SettingsPatch,
       "400 409 502 503"),
    Op("put", "/api/settings/api-key", "Check a key with one small upstream call, then store it.",
       s.ApiKeyAnswer, s.ApiKeyBody, "400 502 503"),
    Op("delete", "/api/settings/api-key", "Remove the stored key (the environment's key "
       "applies again).", s.ApiKeyAnswer, errors="400", params=_PROVIDER),
    Op("post", "/api/settings/test-connection", "Probe an endpoint: reachable, models, tool "
       "calls, context window.", s.ConnectionReport, s.ConnectionTest, "400 409"),
    Op("get", "/api/settings/models", "The models the saved endpoint lists (`/models`).",
       s.ModelList, errors="400", params=_PROVIDER),
), "meta": (
    Op("get", "/api/limits", "The input limits the server checks.", s.Limits),
    Op("get", "/healthz", "Liveness probe (needs no access token).",
       "Serving: `{\"status\": \"ok\"}`.", extra={"guards": ("403",)}),
    Op("get", "/api/openapi.json", "This document (Open API 3.1).", "The document."),
)}
