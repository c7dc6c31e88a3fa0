"""Building blocks shared by every area of the OpenAPI document: errors, ids, helpers.

Every error is `{"error": {"code", "message", ...}}`; the reusable responses below name the
status codes the routes really answer with, so a fuzzer can hold each operation to them.
"""

from ..models.ids import JOB_ID, PERSONA_ID, SESSION_ID

__all__ = ["JOB_ID", "PERSONA_ID", "SESSION_ID"]

_ERRORS = {
    "400": ("BadRequest", "The request is malformed: invalid JSON, a field breaking its rule "
                          "(`validation_error`, `unknown_field`, `invalid_json`, …). Nothing "
                          "was written."),
    "401": ("Unauthorized", "`PERSONA_ACCESS_TOKEN` is set and the request carried no valid "
                            "token (`Authorization: Bearer <token>` or the /signin cookie)."),
    "403": ("Forbidden", "`forbidden_origin`: a state-changing request or WebSocket upgrade "
                         "from another site; `forbidden_host`: without an access token the "
                         "app answers only to localhost."),
    "404": ("NotFound", "No such persona, session, file, revision or job (malformed ids are "
                        "unknown ids)."),
    "409": ("Conflict", "The request conflicts with the current state (e.g. `session_busy`, "
                        "`default_persona`, `cortex_disabled`, `nothing_to_regenerate`)."),
    "413": ("PayloadTooLarge", "The body is over the size limit, or the cortex file would be "
                               "over its hard cap. Nothing was written."),
    "415": ("UnsupportedMediaType", "The body is not JSON (`Content-Type: application/json`)."),
    "428": ("PreconditionRequired", "`If-Match` is required: send the ETag you read."),
    "429": ("TooManyRequests", "Too many failed token checks from this address; wait "
                               "`Retry-After` seconds."),
    "502": ("BadGateway", "The upstream API failed in a way retrying will not fix."),
    "503": ("ServiceUnavailable", "The upstream API is unavailable right now (rate limit, "
                                  "overload, network), or (`server_busy`, with `Retry-After`) "
                                  "the worker's queue of CPU-heavy steps is full; retry later."),
}

_HEADERS = {
    "401": {"WWW-Authenticate": {"schema": {"type": "string"}}},
    "429": {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds."}},
}
RESPONSES = {
    name: {"description": text, "content": {"application/json": {"schema": {
        "$ref": "#/components/schemas/Error"}}}, **({"headers": _HEADERS[status]}
                                                    if status in _HEADERS else {})}
    for status, (name, text) in _ERRORS.items()
}

# Answered before any view runs, by the access checks of DESIGN §9 (src/routes/access.py).
GUARDED = ("401", "403", "429")
GUARDED_WRITE = (*GUARDED, "413", "415")


def json_response(description: str, schema: dict, headers: dict | None = None) -> dict:
    """A JSON response."""
    response = {"description": description,
                "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def json_body(schema: dict, required: bool = True, description: str | None = None) -> dict:
    """A JSON request body."""
    body = {"required": required, "content": {"application/json": {"schema": schema}}}
    if description:
        body["description"] = description
    return body


def errors(*statuses: str) -> dict:
    """References to the shared error responses for `statuses`."""
    return {status: {"$ref": f"#/components/responses/{_ERRORS[status][0]}"}
            for status in statuses}


def path_param(name: str, schema: dict, description: str) -> dict:
    """A path parameter."""
    return {"name": name, "in": "path", "required": True, "schema": schema,
            "description": description}


def operation(operation_id: str, tag: str, summary: str, responses: dict, *,
              write: bool = False, guards: tuple | None = None, **extra) -> dict:
    """One operation; `write` adds the responses every state-changing request may get."""
    if guards is None:
        guards = GUARDED_WRITE if write else GUARDED
    merged = {**errors(*guards), **responses}
    return {"operationId": operation_id, "tags": [tag], "summary": summary,
            "responses": dict(sorted(merged.items())), **extra}


PERSONA_PARAM = path_param("pid", {"type": "string", "pattern": PERSONA_ID},
                           "`default` or a persona id (8–32 of `[a-z0-9]`).")
SESSION_PARAM = path_param("sid", {"type": "string", "pattern": SESSION_ID},
                           "A session id (16 of `[a-z0-9]`).")
