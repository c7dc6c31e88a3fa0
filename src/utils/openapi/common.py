"""Hand-kept parts shared by every area: the error statuses, non-JSON bodies, the intro.

Every error is the `Error` model (`{"error": {"code", "message", ...}}`); `ERRORS` names the
status codes the routes really answer with (a component name and what the status means), so a
fuzzer can hold each operation to them. `table.py` turns all of this into the document.
"""
ERRORS = {
    "400": ("BadRequest", "The request is malformed: invalid JSON, a field breaking its rule "
            "(`validation_error`, `unknown_field`, `invalid_json`, …). Nothing was written."),
    "401": ("Unauthorized", "`PERSONA_ACCESS_TOKEN` is set and the request carried no valid "
            "token (`Authorization: Bearer <token>` or the /signin cookie)."),
    "403": ("Forbidden", "`forbidden_origin`: a state-changing request or WebSocket upgrade from "
            "another site; `forbidden_host`: without an access token the app answers only to "
            "localhost."),
    "404": ("NotFound", "No such persona, session, file, revision or job (or a malformed id)."),
    "409": ("Conflict", "The request conflicts with the current state (e.g. `session_busy`, "
            "`default_persona`, `cortex_disabled`, `nothing_to_regenerate`)."),
    "413": ("PayloadTooLarge", "The body or the cortex file is over its limit; nothing written."),
    "415": ("UnsupportedMediaType", "The body is not JSON (`Content-Type: application/json`)."),
    "428": ("PreconditionRequired", "`If-Match` is required: send the ETag you read."),
    "429": ("TooManyRequests", "Too many failed token checks: wait `Retry-After` seconds."),
    "502": ("BadGateway", "The upstream API failed in a way retrying will not fix."),
    "503": ("ServiceUnavailable", "The upstream API is unavailable right now (rate limit, "
            "overload, network), or (`server_busy`, with `Retry-After`) the worker's queue of "
            "CPU-heavy steps is full; retry later; or (`work_timeout`) a CPU-heavy step ran "
            "past its time limit and was stopped."),
}
# Non-JSON parts a row may name instead of a model: an uploaded file, a picture answer.
FILE_FORM = {"required": True, "content": {"multipart/form-data": {"schema": {"type": "object",
    "properties": {"file": {"type": "string", "format": "binary"}}, "required": ["file"]}}}}
PICTURE = {"description": "The picture.", "content": {mime: {"schema": {"type": "string",
    "format": "binary"}} for mime in ("image/png", "image/jpeg", "image/webp")}}
ERROR_HEADERS = {"401": {"WWW-Authenticate": {"schema": {"type": "string"}}},
                 "429": {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds."}}}
INFO = {"title": "Persona Cortex API", "version": "1.0.0", "description": (
    "The JSON API of Persona Cortex. Every error is `{\"error\": {\"code\", \"message\", ...}}` "
    "with a 4xx/5xx status, never HTML. Requests that change state accept only JSON bodies. "
    "Chat replies stream as Server-Sent Events (`POST /api/chat/stream`) or over the WebSocket "
    "`/ws/chat` (frames in `x-websocket`). When the app is bound beyond loopback, every request "
    "needs the access token (`PERSONA_ACCESS_TOKEN`), see docs/security.md.")}
TAGS = {"chat": "Streaming replies (SSE and WebSocket).", "personas": "The characters.",
        "sessions": "Conversations, one persona each.", "messages": "Editing the end of a "
        "conversation.", "cortex": "Each persona's memory files, history and updates.",
        "settings": "Model, language, the API key.", "access": "Signing in with the access "
        "token (LAN use).", "meta": "Health and this document."}
