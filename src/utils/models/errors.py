"""The one error shape every 4xx/5xx answer has (DESIGN §7)."""
from pydantic import Field

from .resource import Resource


class ErrorDetail(Resource):
    """What went wrong; some codes add fields (`limit`, `current`, `retry_after`, …)."""

    code: str = Field(description="Stable, machine-readable code.")
    message: str = Field(description="What happened, for people.")
    field: str | None = Field(None, description="The request field at fault.")


class Error(Resource):
    """`{"error": {"code", "message", ...}}`."""

    error: ErrorDetail
