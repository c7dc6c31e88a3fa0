"""The base of every answer the API gives (a resource): read as stored, so not strict, and
open to extra keys (a client must ignore fields it does not know)."""
from pydantic import BaseModel, ConfigDict


class Resource(BaseModel):
    """Something the API answers with; its schema is what the document promises."""

    model_config = ConfigDict(extra="allow")
