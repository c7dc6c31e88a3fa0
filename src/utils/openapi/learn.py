"""Learning from an imported conversation (issue 24, docs/chat-import.md#learning-from-it)."""
from .common import (
    SESSION_PARAM,
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    ref,
)

_INT = {"type": "integer"}
_WINDOW = {"type": "integer", "minimum": 2, "maximum": 200,
           "description": "Messages per window (default: the update threshold, 75 % of the "
                          "context limit with the default frequency)."}
_STR_OR_NULL = nullable({"type": "string"})

SCHEMAS = {
    "LearnEstimate": obj({
        "session_id": {"type": "string"}, "persona_id": {"type": "string"},
        "window_messages": _INT, "messages": _INT,
        "windows": {**_INT, "description": "Update requests the run will send (one per window)."},
        "input_tokens": {**_INT, "description": "Estimated (UTF-8 bytes / 3), two rounds a "
                                                "window, no cache discount."},
        "output_tokens": {**_INT, "description": "Estimated: 1,000 a window."},
        "output_tokens_max": {**_INT, "description": "The cap: max_tokens for every round."},
        "cost": obj({
            "usd": nullable({"type": "number"}), "currency": {"type": "string"},
            "known": {"type": "boolean",
                      "description": "False for an OpenAI-compatible endpoint or a model the "
                                     "price table does not know (`usd` is null)."},
            "model": {"type": "string"}, "provider": {"type": "string"},
            "input_per_million": nullable({"type": "number"}),
            "output_per_million": nullable({"type": "number"}),
        }, required=("usd", "known", "model", "provider")),
    }, required=("windows", "messages", "input_tokens", "output_tokens", "cost")),
    "LearnRun": obj({
        "job_id": {"type": "string", "description": "Also a cortex job (`reason: learn`)."},
        "session_id": {"type": "string"}, "persona_id": {"type": "string"},
        "status": {"type": "string", "enum": ["queued", "running", "done", "failed"]},
        "windows": _INT, "windows_done": {**_INT, "description": "Windows read so far (staged; "
                                                                 "applied only at the end)."},
        "messages": _INT, "window_messages": _INT,
        "cancel_requested": {"type": "boolean"}, "cancelled": {"type": "boolean"},
        "error": _STR_OR_NULL, "error_message": _STR_OR_NULL, "proposal_id": _STR_OR_NULL,
        "summary": _STR_OR_NULL, "usage": nullable({"type": "object"}),
        "files": {"type": "array", "items": {"type": "string"}},
        "created_at": TIMESTAMP, "started_at": nullable(TIMESTAMP),
        "finished_at": nullable(TIMESTAMP),
    }, required=("job_id", "status", "windows", "windows_done", "cancelled")),
}


def paths() -> dict:
    """The learn paths, per imported session."""
    base = "/api/sessions/{sid}/learn"
    run = json_response("The learn run.", ref("LearnRun"))
    return {
        base: {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "readLearning", "sessions", "The conversation's newest learn run (or null).",
                {"200": json_response("Progress: `windows_done` of `windows`.", obj({
                    "session_id": {"type": "string"}, "persona_id": {"type": "string"},
                    "run": nullable(ref("LearnRun"))}, required=("run",))),
                 **errors("404", "409")},
                description="`409 not_imported` for a conversation that was not imported."),
            "post": operation(
                "startLearning", "sessions",
                "Learn from the imported conversation: its active branch is read in windows "
                "through the regular cortex update and applied (or, in review mode, proposed) "
                "all at once when every window succeeded.",
                {"202": json_response("The queued run.", ref("LearnRun"), headers={
                    "Location": {"schema": {"type": "string"}}}),
                 **errors("400", "404", "409")}, write=True,
                requestBody=json_body(obj({"window_messages": _WINDOW}, additional=False),
                                      required=False),
                description="`409`: `not_imported`, `nothing_to_learn`, `cortex_disabled`, "
                            "`learn_in_progress` (one learn run per persona at a time)."),
        },
        base + "/estimate": {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "estimateLearning", "sessions",
                "Windows, tokens and cost of learning from the conversation; nothing runs.",
                {"200": json_response("The estimate.", ref("LearnEstimate")),
                 **errors("400", "404", "409")},
                parameters=[{"name": "window_messages", "in": "query", "required": False,
                             "schema": _WINDOW}]),
        },
        base + "/cancel": {
            "parameters": [SESSION_PARAM],
            "post": operation(
                "cancelLearning", "sessions",
                "Cancel the queued or running learn run: nothing it read is applied.",
                {"200": run, **errors("400", "404", "409")}, write=True,
                requestBody=json_body(obj({}, additional=False), required=False),
                description="A queued run ends at once; a running one stops before its next "
                            "window. `409 learn_not_running` when nothing runs or the run is "
                            "already being applied."),
        },
    }
