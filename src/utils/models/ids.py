"""The shapes of our ids, for schemas (the services look ids up: a malformed one is unknown,
a 404, so these patterns describe rather than validate)."""
from typing import Any, Literal

from pydantic import BaseModel, Field

PERSONA_ID = r"^(default|[a-z0-9]{8,32})$"
SESSION_ID = r"^[a-z0-9]{16}$"
JOB_ID = r"^[0-9a-f]{32}$"


def shaped(pattern: str) -> Any:
    """A `json_schema_extra` that documents a shape without refusing other strings."""
    return {"pattern": pattern}


class PathIds(BaseModel):
    """The ids in the API's paths, described for the OpenAPI document (never validated here:
    the views look ids up)."""

    pid: str = Field(pattern=PERSONA_ID,
                     description="`default` or a persona id (8–32 of `[a-z0-9]`).")
    sid: str = Field(pattern=SESSION_ID, description="A session id (16 of `[a-z0-9]`).")
    upid: int = Field(ge=1, description="A user persona id.")
    mid: int = Field(ge=1, description="A message id.")
    filename: Literal["memory.md", "soul.md", "relationship.md"] = Field(
        description="One of the three cortex files.")
    rev: int = Field(ge=0, description="A revision id.")
    job_id: str = Field(pattern=JOB_ID, description="A job id.")
    proposal_id: str = Field(pattern=r"^[0-9a-f]{32}$", description="A proposal id.")
    bid: int = Field(ge=0, description="A book id.")
    eid: int = Field(ge=0, description="An entry id.")
    entry_id: int = Field(ge=0, description="An archive entry id.")
