"""Helpers for the Open API tests: rule ↔ path mapping, seeded data, pinned ids for the fuzzer."""
import copy
import re

import schemathesis

from src.utils.models.ids import JOB_ID, PERSONA_ID, SESSION_ID

# Served to browsers, not part of the JSON API.
UNDOCUMENTED_ENDPOINTS = ("static",)
UNDOCUMENTED_BLUEPRINTS = ("pages",)
AUTOMATIC_METHODS = {"HEAD", "OPTIONS"}
_CONVERTER = re.compile(r"<(?:[a-z_]+(?:\([^)]*\))?:)?([a-zA-Z_][a-zA-Z0-9_]*)>")
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def openapi_path(rule: str) -> str:
    """`/api/x/<int:rev>` -> `/api/x/{rev}`."""
    return _CONVERTER.sub(r"{\1}", rule)


def app_operations(app) -> set[tuple[str, str]]:
    """(METHOD, path) of every route the document must describe."""
    found = set()
    for rule in app.url_map.iter_rules():
        blueprint = rule.endpoint.split(".", 1)[0] if "." in rule.endpoint else None
        if rule.endpoint in UNDOCUMENTED_ENDPOINTS or blueprint in UNDOCUMENTED_BLUEPRINTS:
            continue
        for method in rule.methods - AUTOMATIC_METHODS:
            found.add((method, openapi_path(rule.rule)))
    return found


def document_operations(document: dict) -> set[tuple[str, str]]:
    """(METHOD, path) of every operation in the document."""
    return {(method.upper(), path) for path, item in document["paths"].items()
            for method in item if method in HTTP_METHODS}


def pin_ids(document: dict, *, persona_ids, session_ids, job_ids) -> dict:
    """A copy of `document` whose requests may name only the given (seeded) ids, so generated
    requests reach existing personas, sessions and jobs; responses are unchanged."""
    enums = {PERSONA_ID: list(persona_ids), SESSION_ID: list(session_ids), JOB_ID: list(job_ids)}

    def visit(node):
        if isinstance(node, dict):
            if node.get("type") == "string" and node.get("pattern") in enums:
                return {"type": "string", "enum": enums[node["pattern"]]}
            if node.get("in") == "header" and node.get("name") == "If-Match":
                return {**node, "schema": {"type": "string", "enum": ["*", '"1"']}}
            return {key: visit(value) for key, value in node.items()}
        if isinstance(node, list):
            return [visit(item) for item in node]
        return node

    pinned = copy.deepcopy(document)
    for item in pinned["paths"].values():
        for key, value in item.items():
            if key == "parameters":
                item[key] = visit(value)
            elif key in HTTP_METHODS:
                for part in ("parameters", "requestBody"):
                    if part in value:
                        value[part] = visit(value[part])
    return pinned


class Conformance:
    """Holds real responses to the document: the status must be documented for the operation,
    and schemathesis checks the content type and the body (every event of an SSE stream)."""

    def __init__(self, document: dict):
        self.document = document
        self.schema = schemathesis.openapi.from_dict(document)

    def __call__(self, response, method: str, path: str):
        """Returns `response` after checking it against `method path` (a documented path)."""
        documented = self.document["paths"][path][method.lower()]["responses"]
        assert str(response.status_code) in documented, \
            f"{method} {path}: status {response.status_code} is not documented " \
            f"({sorted(documented)}): {response.get_data(as_text=True)[:300]}"
        self.schema[path][method].validate_response(response)
        return response
