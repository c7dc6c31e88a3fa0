"""The shapes of our ids, for schemas (the services look ids up: a malformed one is unknown,
a 404, so these patterns describe rather than validate)."""
from typing import Any

PERSONA_ID = r"^(default|[a-z0-9]{8,32})$"
SESSION_ID = r"^[a-z0-9]{16}$"
JOB_ID = r"^[0-9a-f]{32}$"


def shaped(pattern: str) -> Any:
    """A `json_schema_extra` that documents a shape without refusing other strings."""
    return {"pattern": pattern}
