"""Settings, the API key, the health probe and this document itself."""
from ...routes import health, limits, settings
from ..models import settings as s
from .table import Op, query

_PROVIDER = (query("provider", {"enum": ["anthropic", "openai_compatible"]},
                   "Whose (default: the current provider)."),)
ROUTES = {"settings": (
    Op(settings.get_settings, s.Settings),
    Op(settings.update_settings, s.Settings, s.SettingsPatch, "400 409 502 503"),
    Op(settings.set_api_key, s.ApiKeyAnswer, s.ApiKeyBody, "400 502 503"),
    Op(settings.delete_api_key, s.ApiKeyAnswer, errors="400", params=_PROVIDER),
    Op(settings.test_connection, s.ConnectionReport, s.ConnectionTest, "400 409"),
    Op(settings.list_models, s.ModelList, errors="400", params=_PROVIDER),
), "meta": (
    Op(limits.get_limits, s.Limits),
    Op(health.healthz, "Serving: `{\"status\": \"ok\"}`.", extra={"guards": ("403",)}),
    Op("This document (Open API 3.1).", "The document.", method="get", path="/api/openapi.json"),
)}
