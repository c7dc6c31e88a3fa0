"""Fuzzing the JSON API from its Open API document (schemathesis, in-process over WSGI).

Each operation gets valid and invalid requests twice over: with any ids the document allows
(mostly unknown ones), and aimed at seeded data (path parameters naming an existing persona,
file, revision, session or job; ids in bodies and queries pinned to them), so requests reach
the deep paths. Every response must be a non-5xx (an unreachable upstream's documented 502/503 aside) that the
document describes (status, content
type, headers and body, SSE events included), and every request that breaks the document must be
refused with a 4xx. Upstream calls go to the Claude fake.
Deterministic by default; FUZZ_EXAMPLES and FUZZ_SEED widen or vary the search.
"""
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, seed, settings, strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from src.utils.openapi import build_document
from tests.openapi.support import document_operations, pin_ids

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
SEED = os.environ.get("FUZZ_SEED")
# What an upstream that cannot be reached answers through us: a 502/503 carrying our JSON error
# with one of these codes is the documented answer (e.g. a generated base URL that does not
# resolve, given with a key to check there), not a crash of ours.
UPSTREAM_CODES = {"connection_error", "timeout", "overloaded", "rate_limited", "api_error"}


def not_our_server_error(ctx, response, case):
    """`not_a_server_error`, except for an upstream's failure passed on as documented."""
    if response.status_code in (502, 503):
        try:
            code = response.json()["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = None
        if code in UPSTREAM_CODES:
            return None
    return not_a_server_error(ctx, response, case)


CHECKS = [not_our_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance, negative_data_rejection]
# Requests that break the document must be refused with a 4xx (412/413 included: a malformed
# If-Match never matches, a body over the limit is too large).
CONFIG = schemathesis.Config.from_dict({"checks": {"negative_data_rejection": {
    "expected-statuses": ["400", "401", "403", "404", "405", "409", "412", "413", "415", "428",
                          "429"]}}})
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
OPERATIONS = sorted(document_operations(build_document()), key=lambda op: (op[1], op[0]))


def _operation(document: dict, app, method: str, path: str):
    schema = schemathesis.openapi.from_dict(document, config=CONFIG)
    schema.app = app
    return schema[path][method]


def _anywhere(operation):
    return st.one_of(*(operation.as_strategy(mode) for mode in MODES))


def _seeded(operation, path_parameters: list[dict]):
    """Cases whose path parameters name seeded data (one strategy per distinct combination)."""
    names = {p.name for p in operation.path_parameters}
    combos = sorted({tuple(sorted((k, v) for k, v in combo.items() if k in names))
                     for combo in path_parameters})
    return st.one_of(*(operation.as_strategy(mode, path_parameters=dict(combo))
                       for combo in combos for mode in MODES))


@pytest.mark.parametrize("method,path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_fuzz_operation(app, seeded, method, path):
    """No 5xx, and every response conforms to the document."""
    document = build_document()
    cases = st.one_of(
        _anywhere(_operation(document, app, method, path)),
        _seeded(_operation(pin_ids(document, **seeded["ids"]), app, method, path),
                seeded["path_parameters"]))

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=SEED is None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(case=cases)
    def run(case):
        case.call_and_validate(checks=CHECKS, app=app)

    if SEED is not None:
        run = seed(int(SEED))(run)
    run()
