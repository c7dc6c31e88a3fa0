"""The generator of the document: route tables (`Op` rows) turned into Open API operations,
and the JSON schemas of the models they name (`model_json_schema`).

A row names the view, the request body model and the response model (or, where a model would
be too much, a short description of a JSON answer). Method and path come from the view's
blueprint rule, summary and description from its docstring, the schemas from the same pydantic
models the routes validate with: the document cannot drift from the app. This module holds no
document text (tests/openapi/test_budget.py); the hand-kept data is in the area modules and
`common.py`.
"""
import copy
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from flask import Flask
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..models.errors import Error
from ..models.ids import PathIds
from .common import ERROR_HEADERS, ERRORS

_PREFIX = "#/components/schemas/"
_REGISTRY: dict[str, tuple[type[BaseModel], str]] = {}
_BUILT: dict = {}
_CONVERTER = re.compile(r"<(?:[a-z_]+(?:\([^)]*\))?:)?(\w+)>")
# Answered before any view runs, by the access checks of DESIGN §9 (src/routes/access.py).
_GUARDED = ("401", "403", "429")
_GUARDED_WRITE = (*_GUARDED, "413", "415")


def error_responses() -> dict:
    """`components/responses`: one per status of `ERRORS`, each the `Error` model as JSON."""
    return {name: {**json_response(text, model_ref(Error)),
                   **({"headers": ERROR_HEADERS[status]} if status in ERROR_HEADERS else {})}
            for status, (name, text) in ERRORS.items()}


def errors(*statuses: str) -> dict:
    """References to the shared error responses for `statuses`."""
    return {status: {"$ref": f"#/components/responses/{ERRORS[status][0]}"}
            for status in statuses}


def json_response(description: str, schema: dict, headers: dict | None = None) -> dict:
    """A JSON response."""
    response = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def json_body(schema: dict, required: bool = True, description: str | None = None) -> dict:
    """A JSON request body."""
    body = {"required": required, "content": {"application/json": {"schema": schema}}}
    if description:
        body["description"] = description
    return body


def operation(operation_id: str, tag: str, summary: str, responses: dict, *,
              write: bool = False, guards: tuple | None = None, **extra: Any) -> dict:
    """One operation; `write` adds the responses every state-changing request may get."""
    if guards is None:
        guards = _GUARDED_WRITE if write else _GUARDED
    merged = {**errors(*guards), **responses}
    return {"operationId": operation_id, "tags": [tag], "summary": summary,
            "responses": dict(sorted(merged.items())), **extra}


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
    """One row of a route table. `view` is the Flask view: its blueprint's rule gives the method
    and path, its docstring the summary (first paragraph) and description (the rest); a route
    that is no blueprint view (the WebSocket, this document) names a module or a summary and
    its `method` and `path`. `ok` is the answer's model, a short description of a JSON answer,
    or a whole response object (a picture, a download); `body` a model or a request body object
    (a file form); `errors` the error statuses the view answers with; `params` query and header
    parameters (path ones come from the path); `headers` those of the success answer; `more`
    further responses (304, 412)."""

    view: Callable[..., Any] | ModuleType | str
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
    method: str = ""
    path: str = ""


def sse_response(description: str, events: dict[str, type[BaseModel]]) -> dict:
    """A `text/event-stream` answer described per event, the Open API 3.2 way (`event` + `data`
    carrying JSON by `contentMediaType`/`contentSchema`); 3.1 tools read it as the schema of one
    event."""
    return {"description": description, "content": {"text/event-stream": {"schema": {"oneOf": [
        {"type": "object", "required": ["event", "data"], "properties": {
            "event": {"const": name}, "data": {"type": "string", "contentMediaType":
                                               "application/json",
                                               "contentSchema": model_ref(model)}}}
        for name, model in events.items()]}}}}


def websocket(url: str, frame_format: str, client: Iterable[type[BaseModel]],
              server: dict[str, type[BaseModel]]) -> dict:
    """`x-websocket`: the frames of a WebSocket (Open API has no operation type for one); a
    client frame's kind is its `type` field's literal, a server frame is `{"type": kind, ...}`."""
    return {"url": url, "frame_format": frame_format,
            "client_frames": {_literal(frame): untitled(frame.model_json_schema())
                              for frame in client},
            "server_frames": {kind: {"allOf": [{"type": "object", "properties": {
                "type": {"const": kind}}, "required": ["type"]}, model_ref(model)]}
                for kind, model in server.items()}}


def binary(description: str, *mimes: str) -> dict:
    """A file answer (an attachment or a picture) in any of `mimes`; JSON ones are objects."""
    return {"description": description, "content": {
        mime: {"schema": {"type": "object"} if mime == "application/json" else
               {"type": "string", "format": "binary"}} for mime in mimes}}


def _literal(frame: type[BaseModel]) -> str:
    """The value of a frame's `type: Literal[...]` field."""
    return frame.model_fields["type"].annotation.__args__[0]  # type: ignore[union-attr]


def query(name: str, schema: dict | None = None, text: str | None = None, *,
          required: bool = False) -> dict:
    """A query parameter (a string unless `schema` says otherwise)."""
    return _parameter("query", name, schema or {"type": "string"}, text, required)


def header(name: str, text: str | None = None, *, required: bool = False) -> dict:
    """A request header parameter (a string)."""
    return _parameter("header", name, {"type": "string"}, text, required)


def _parameter(where: str, name: str, schema: dict, text: str | None, required: bool) -> dict:
    found = {"name": name, "in": where, "required": required, "schema": schema}
    return {**found, "description": text} if text else found


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


def _prose(op: Op) -> tuple[str, str | None]:
    """The summary and description of `op`: from its view's docstring, one paragraph each."""
    if isinstance(op.view, str):
        return op.view, op.description
    summary, _, rest = (inspect.getdoc(op.view) or "").partition("\n\n")
    return _one_line(summary), op.description or _one_line(rest) or None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _first_paragraph(model: type[BaseModel]) -> str:
    return (model.__doc__ or model.__name__).strip().split("\n\n")[0].replace("\n", " ")


def _path_param(name: str) -> dict:
    """A path parameter, described by the field of `PathIds` of its name."""
    schema = dict(untitled(PathIds.model_json_schema()["properties"][name]))
    return _parameter("path", name, schema, schema.pop("description"), required=True)


def document(areas: Iterable[ModuleType], info: dict, tags: dict[str, str]) -> dict:
    """The whole document (a fresh copy: callers may change it freely), built once from the
    route tables of `areas` (each a module with `ROUTES`: tag → rows)."""
    if not _BUILT:
        routes: dict[str, tuple[Op, ...]] = {}
        for area in areas:
            for tag, rows in area.ROUTES.items():
                routes[tag] = (*routes.get(tag, ()), *rows)
        _BUILT.update(_assemble(routes, info, tags))
    return copy.deepcopy(_BUILT)


def _assemble(routes: dict[str, tuple[Op, ...]], info: dict, tags: dict[str, str]) -> dict:
    paths: dict = {}
    for tag, rows in routes.items():
        paths.update(table_paths(tag, rows))
    responses = error_responses()
    return {
        "openapi": "3.1.0",
        "info": info,
        "servers": [{"url": "/"}],
        "tags": [{"name": name, "description": text} for name, text in tags.items()],
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(model_schemas().items())),
                       "responses": responses},
    }


def _rules(rows: Iterable[Op]) -> dict[Any, tuple[str, str]]:
    """`(method, path)` of each blueprint view of `rows`, read from the rules its blueprint
    (the view's module's `bp`) declares, registered on a throwaway app."""
    app = Flask(__name__)
    for module in {sys.modules[op.view.__module__] for op in rows if callable(op.view)}:
        app.register_blueprint(module.bp)
    return {app.view_functions[rule.endpoint]: (method.lower(), _CONVERTER.sub(r"{\1}", rule.rule))
            for rule in app.url_map.iter_rules()
            for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}}


def table_paths(tag: str, rows: Iterable[Op]) -> dict:
    """The Open API paths of a route table (one tag)."""
    paths: dict = {}
    rows = tuple(rows)
    rules = _rules(rows)
    for row in rows:
        op = replace(row, method=rules[row.view][0], path=rules[row.view][1]) if callable(
            row.view) else row
        extra: dict = dict(op.extra)
        if isinstance(op.body, dict):
            extra["requestBody"] = op.body
        elif op.body is not None:
            extra["requestBody"] = json_body(model_ref(op.body, "validation"),
                                             required=not op.optional_body,
                                             description=_first_paragraph(op.body))
        if op.params:
            extra["parameters"] = list(op.params)
        summary, description = _prose(op)
        if description:
            extra["description"] = description
        write = op.method != "get"
        found = {"200": _response(op)} if op.status == "200" else {op.status: _response(op)}
        item = paths.setdefault(op.path, {})
        names = re.findall(r"{(\w+)}", op.path)
        if names:
            item["parameters"] = [_path_param(name) for name in names]
        item[op.method] = operation(_operation_id(op), tag, summary,
                                    {**found, **op.more, **errors(*op.errors.split())},
                                    write=write,
                                    **extra)
    return paths
