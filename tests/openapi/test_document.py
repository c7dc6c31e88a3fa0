"""The Open API document is served, valid, and describes exactly the app's routes."""
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from src.utils.openapi import build_document
from tests.openapi.support import app_operations, document_operations, openapi_path


def test_served_as_json(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.get_json() == build_document()


def test_is_valid_openapi_3_1():
    document = build_document()
    assert document["openapi"].startswith("3.1")
    problems = [f"{'/'.join(map(str, e.instance_path))}: {e.message}"
                for e in OPENAPI_31_VALIDATOR.iter_errors(document)]
    assert problems == []


def test_every_route_is_documented_and_nothing_else(app):
    in_app, documented = app_operations(app), document_operations(build_document())
    assert in_app - documented == set(), "routes missing from the document"
    assert documented - in_app == set(), "documented operations the app does not have"


def test_every_reference_resolves():
    document = build_document()
    refs = set()

    def collect(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(document)
    for ref in sorted(refs):
        target = document
        for part in ref.removeprefix("#/").split("/"):
            assert part in target, f"unresolved {ref}"
            target = target[part]


def test_every_operation_documents_its_errors_as_json():
    """Each operation names at least one error status, and every JSON error is the Error shape."""
    document = build_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            statuses = set(operation["responses"])
            assert statuses & {"400", "403", "404"}, f"{method} {path} documents no error"
            assert any(s.startswith("2") or s in ("101", "303") for s in statuses), \
                f"{method} {path} documents no success"


def test_websocket_frames_are_documented():
    socket = build_document()["paths"]["/ws/chat"]["get"]["x-websocket"]
    assert set(socket["client_frames"]) == {"chat", "regenerate", "continue", "resume", "stop",
                                            "subscribe"}
    assert {"start", "chunk", "done", "error", "cortex", "title", "idle"} <= set(
        socket["server_frames"])


def test_rule_conversion():
    assert openapi_path("/api/personas/<pid>/cortex/<filename>/history/<int:rev>") == \
        "/api/personas/{pid}/cortex/{filename}/history/{rev}"
    assert openapi_path("/static/<path:filename>") == "/static/{filename}"


def test_the_sleep_status_documents_its_last_consolidation():
    schemas = build_document()["components"]["schemas"]
    last = schemas["SleepStatus"]["properties"]["last_consolidation"]
    assert {"$ref": "#/components/schemas/ConsolidationOutcome"} in last["anyOf"]
    assert set(schemas["ConsolidationOutcome"]["required"]) == {
        "id", "status", "summary", "error", "finished_at", "proposal_id"}
