"""The generated part of the document: a route table per blueprint (`Op` rows) turned into
Open API operations, and the JSON schemas of the models they name (`model_json_schema`).

A row names the request body model and the response model (or, where a model would be too
much, a short description of a JSON answer); the schemas come from the same pydantic models
the routes validate with, so the document cannot drift from the checks.
"""
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .common import (
    JOB_ID,
    PERSONA_PARAM,
    SESSION_PARAM,
    errors,
    json_body,
    json_response,
    operation,
    path_param,
)

_PREFIX = "#/components/schemas/"
_REGISTRY: dict[str, tuple[type[BaseModel], str]] = {}
PATH_PARAMS = {"pid": PERSONA_PARAM, "sid": SESSION_PARAM,
               "upid": path_param("upid", {"type": "integer", "minimum": 1}, "A user persona id."),
               "mid": path_param("mid", {"type": "integer", "minimum": 1}, "A message id."),
               "filename": path_param("filename", {"type": "string", "enum": [
                   "memory.md", "soul.md", "relationship.md"]}, "One of the three cortex files."),
               "rev": path_param("rev", {"type": "integer", "minimum": 0}, "A revision id."),
               "job_id": path_param("job_id", {"type": "string", "pattern": JOB_ID}, "A job id."),
               "proposal_id": path_param("proposal_id", {"type": "string",
                                                         "pattern": "^[0-9a-f]{32}$"},
                                         "A proposal id."),
               "bid": path_param("bid", {"type": "integer", "minimum": 0}, "A book id."),
               "eid": path_param("eid", {"type": "integer", "minimum": 0}, "An entry id."),
               "entry_id": path_param("entry_id", {"type": "integer", "minimum": 0},
                                      "An archive entry id.")}
ANY_OBJECT = {"required": False, "description": "None, or a JSON object such as `{}` (its "
              "fields are ignored).", "content": {"application/json": {"schema": {
                  "type": "object"}}}}
# Non-JSON parts a row may name instead of a model: an uploaded file, a picture answer.
FILE_FORM = {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "properties": {"file": {"type": "string", "format": "binary"}},
    "required": ["file"]}}}}
PICTURE = {"description": "The picture.", "content": {
    mime: {"schema": {"type": "string", "format": "binary"}}
    for mime in ("image/png", "image/jpeg", "image/webp")}}


def model_ref(model: type[BaseModel], mode: str = "serialization") -> dict:
    """A reference to `model`'s schema, which the document's components then include
    (`validation` for request bodies: what is accepted; `serialization` for answers; a model
    that is both, such as a settings object, is described as accepted)."""
    if _REGISTRY.get(model.__name__, (model, ""))[1] != "validation":
        _REGISTRY[model.__name__] = (model, mode)
    return {"$ref": _PREFIX + model.__name__}


def model_schemas() -> dict:
    """The JSON schemas of every model referenced so far (and of the models they use)."""
    pairs: list[Any] = [(model, mode) for model, mode in _REGISTRY.values()]
    _, top = models_json_schema(pairs, ref_template=_PREFIX + "{model}")
    return {name: untitled(schema) for name, schema in top.get("$defs", {}).items()}


def untitled(node: Any) -> Any:
    """`node` without pydantic's generated `title`s (field names say it already)."""
    if isinstance(node, dict):
        return {key: untitled(value) for key, value in node.items()
                if not (key == "title" and isinstance(value, str))}
    if isinstance(node, list):
        return [untitled(item) for item in node]
    return node


@dataclass(frozen=True)
class Op:
    """One row of a route table: `ok` is the answer's model, a short description of a JSON
    answer, or a whole response object (a picture, a download); `body` a model or a request
    body object (a file form); `params` query and header parameters (path ones come from
    the path); `headers` those of the success answer; `more` further responses (304, 412)."""

    method: str
    path: str
    summary: str
    ok: type[BaseModel] | str | dict
    body: type[BaseModel] | dict | None = None
    errors: str = ""
    status: str = "200"
    description: str | None = None
    params: tuple[dict, ...] = ()
    extra: dict = field(default_factory=dict)
    headers: dict | None = None
    more: dict = field(default_factory=dict)
    optional_body: bool = False


def query_of(model: type[BaseModel]) -> tuple[dict, ...]:
    """Query parameters described by a model's fields."""
    schema = model.model_json_schema()
    return tuple({"name": name, "in": "query", "required": name in schema.get("required", ()),
                  "schema": untitled(field)} for name, field in schema["properties"].items())


def _operation_id(op: Op) -> str:
    words = re.findall(r"[a-z0-9]+", f"{op.method} {op.path.removeprefix('/api')}".lower())
    return words[0] + "".join(w.title() for w in words[1:])


def _response(op: Op) -> dict:
    if isinstance(op.ok, dict):
        return op.ok
    if isinstance(op.ok, str):
        return json_response(op.ok, {"type": "object"})
    return json_response(_first_paragraph(op.ok), model_ref(op.ok), op.headers)


def _first_paragraph(model: type[BaseModel]) -> str:
    return (model.__doc__ or model.__name__).strip().split("\n\n")[0].replace("\n", " ")


def table_paths(tag: str, rows: Iterable[Op]) -> dict:
    """The Open API paths of a route table (one tag)."""
    paths: dict = {}
    for op in rows:
        extra: dict = dict(op.extra)
        if isinstance(op.body, dict):
            extra["requestBody"] = op.body
        elif op.body is not None:
            extra["requestBody"] = json_body(model_ref(op.body, "validation"),
                                             required=not op.optional_body,
                                             description=_first_paragraph(op.body))
        if op.params:
            extra["parameters"] = list(op.params)
        if op.description:
            extra["description"] = op.description
        write = op.method != "get"
        found = {"200": _response(op)} if op.status == "200" else {op.status: _response(op)}
        item = paths.setdefault(op.path, {})
        names = re.findall(r"{(\w+)}", op.path)
        if names:
            item["parameters"] = [PATH_PARAMS[name] for name in names]
        item[op.method] = operation(_operation_id(op), tag, op.summary,
                                    {**found, **op.more, **errors(*op.errors.split())},
                                    write=write,
                                    **extra)
    return paths
