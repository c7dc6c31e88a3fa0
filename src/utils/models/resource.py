"""The base of every answer the API gives (a resource): read as stored, so not strict, and
open to extra keys (a client must ignore fields it does not know).

Storage builds resources with `model_validate`, once per row (docs/development.md, "Typed
resources"): the types are checked where the row enters, so a wrong column fails there and not
in a client. Id shapes are documented with `ids.shaped`, not enforced: a stored id is an id.
"""
from pydantic import BaseModel, ConfigDict


class Resource(BaseModel):
    """Something the API answers with; its schema is what the document promises."""

    model_config = ConfigDict(extra="allow")
