"""The typed model layer (DESIGN §15): one declaration per rule, read by the server's checks,
the OpenAPI document and the browser's limits alike."""
import pytest

from src.utils import provider
from src.utils.limits import as_document
from src.utils.models import Invalid, parse
from src.utils.models.base import KEY_SHOWN
from src.utils.models.conversations import ChatMessage, SessionCreate, SessionPatch
from src.utils.models.settings import CortexSettings, Limits, SettingsPatch
from src.utils.models.user_personas import UserPersonaCreate
from src.utils.openapi import build_document
from src.utils.openapi.table import model_schemas
from src.utils.storage.settings import set_setting
from src.utils.storage.settings_store import cortex_settings, memory_run_settings


def _body_schema(document: dict, method: str, path: str) -> dict:
    ref = document["paths"][path][method]["requestBody"]["content"]["application/json"]
    name = ref["schema"]["$ref"].rsplit("/", 1)[1]
    return document["components"]["schemas"][name]


@pytest.mark.parametrize("method,path,model", [
    ("put", "/api/settings", SettingsPatch), ("put", "/api/cortex/settings", CortexSettings),
    ("post", "/api/sessions", SessionCreate), ("patch", "/api/sessions/{sid}", SessionPatch),
    ("post", "/api/chat/stream", ChatMessage), ("post", "/api/user-personas", UserPersonaCreate),
])
def test_request_bodies_in_the_document_are_the_models_schemas(method, path, model):
    document = build_document()
    generated = model_schemas()[model.__name__]
    assert _body_schema(document, method, path) == generated
    assert generated["additionalProperties"] is False
    assert set(generated["properties"]) == set(model.model_fields)


def test_limits_are_the_models_field_constraints():
    limits = as_document()
    assert limits["settings"]["max_tokens"] == {"min": 1, "max": 64000}
    assert limits["settings"]["user_name"] == {"min_length": 0, "max_length": 80}
    assert limits["cortex_settings"]["idle_minutes"] == {"min": 1, "max": 1440}
    assert limits["session"]["title"] == {"min_length": 1, "max_length": 120}
    assert limits["user_persona"]["name"] == {"min_length": 1, "max_length": 80}
    schema = model_schemas()["SettingsPatch"]["properties"]["max_tokens"]
    assert (schema["minimum"], schema["maximum"]) == (1, 64000)


@pytest.mark.parametrize("data,code,field,message", [
    ({"max_tokens": "100"}, "validation_error", "max_tokens",
     "max_tokens: must be an integer from 1 to 64000"),
    ({"max_tokens": True}, "validation_error", "max_tokens",
     "max_tokens: must be an integer from 1 to 64000"),
    ({"language": "de", "temperature": 1, "max_tokens": 0}, "unknown_field", "temperature",
     None),
    ({"user_name": "a\nb"}, "validation_error", "user_name", "user_name: must be a single line"),
    ({"effort": "extreme"}, "validation_error", "effort",
     'effort: must be one of "low", "medium", "high", "xhigh", "max", null'),
    ({"context_limit": 1, "max_tokens": 0}, "validation_error", "context_limit", None),
])
def test_a_refusal_names_the_first_field_in_todays_shape(data, code, field, message):
    with pytest.raises(Invalid) as caught:
        parse(SettingsPatch, data)
    assert (caught.value.code, caught.value.field) == (code, field)
    if message is not None:
        assert caught.value.message == message


def test_a_huge_unknown_key_is_named_cut_short():
    """A refusal names an unknown key, but not a megabyte of it twice (field and message)."""
    key = "k" * 1_000_000
    with pytest.raises(Invalid) as caught:
        parse(SettingsPatch, {key: 1})
    assert caught.value.code == "unknown_field"
    assert caught.value.field == "k" * KEY_SHOWN + "…"
    assert len(caught.value.message) < 1_000


def test_a_partial_update_knows_which_fields_were_given():
    assert parse(SettingsPatch, {"user_name": " Sam ", "effort": None}).given() == {
        "user_name": "Sam", "effort": None}


def test_stored_settings_that_broke_their_rule_fall_back_field_by_field(app):
    conn = provider.get_db(app).conn()
    set_setting(conn, "cortex", {"enabled": False, "frequency": "hourly", "idle_minutes": 0})
    assert cortex_settings(conn).model_dump() == {"enabled": False, "frequency": "medium",
                                                  "idle_minutes": 30}


@pytest.mark.parametrize("stored, shown", [
    ({"language": "fr", "model": 5, "user_name": "x" * 81, "cortex_model": 7},
     {"language": None, "model": None, "user_name": None, "cortex_model": None}),
    ({"language": "de", "model": "claude-opus-5-5", "user_name": "Jo", "cortex_model": "  "},
     {"language": "de", "model": "claude-opus-5-5", "user_name": "Jo", "cortex_model": None}),
    ({"cortex_model": " claude-haiku-5-5 "},
     {"language": None, "model": None, "user_name": None, "cortex_model": "claude-haiku-5-5"})])
def test_memory_runs_read_the_app_settings_checked_as_the_api_checks_them(app, stored, shown):
    """A stored value the settings API would refuse reaches no memory run (it falls back to
    the cortex's own default); the hidden `cortex_model` counts only as a non-empty string."""
    conn = provider.get_db(app).conn()
    set_setting(conn, "app", stored)
    assert memory_run_settings(conn).model_dump() == shown
    assert memory_run_settings(conn, user_name="Ada").user_name == "Ada"


def test_the_cortex_settings_follow_each_write_of_another_connection(app, tmp_path):
    """Their validation is reused per stored text; the row itself is read every time, so a
    write by another process is seen at once, and what a caller changes is its own copy."""
    from src.utils.cortex.settings import load_cortex_settings
    from src.utils.storage.db import connect
    conn = provider.get_db(app).conn()
    other = connect(provider.get_db(app).path)  # as another process would write
    try:
        set_setting(other, "cortex", {"enabled": False, "frequency": "rare", "idle_minutes": 5})
        first = load_cortex_settings(conn)
        assert first.model_dump() == {"enabled": False, "frequency": "rare", "idle_minutes": 5}
        first.enabled = True
        assert load_cortex_settings(conn).enabled is False
        set_setting(other, "cortex", {"enabled": True, "frequency": "frequent", "idle_minutes": 9})
        assert load_cortex_settings(conn).model_dump() == {
            "enabled": True, "frequency": "frequent", "idle_minutes": 9}
        assert cortex_settings(conn).idle_minutes == 9
    finally:
        other.close()


def _json_schemas(document: dict):
    """(where, schema) of every JSON request body and JSON answer in the document."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            body = operation.get("requestBody", {}).get("content", {})
            if "application/json" in body:
                yield f"{method} {path} body", body["application/json"]["schema"]
            for status, answer in operation["responses"].items():
                content = answer.get("content", {})
                if "application/json" in content:
                    yield f"{method} {path} {status}", content["application/json"]["schema"]


def test_every_json_body_and_answer_is_a_generated_schema():
    """No schema is written by hand: each names a model's schema (a bare object only where the
    answer is free-form: an agent file, this document, an ignored body)."""
    document = build_document()
    generated = model_schemas()
    loose = []
    for where, schema in _json_schemas(document):
        if "$ref" in schema:
            assert schema["$ref"].rsplit("/", 1)[1] in generated, where
        else:
            assert schema == {"type": "object"}, where
            loose.append(where)
    assert len(loose) <= 8, loose


def test_the_limits_document_is_its_model_whole():
    """Every form `GET /api/limits` serves is a field of `Limits` (the OpenAPI answer), so the
    document cannot leave a form out (it left out `user_persona` and `world`)."""
    limits = as_document()
    assert set(limits) == set(Limits.model_fields)
    assert Limits.model_validate(limits).model_dump(exclude_none=True) == limits
    assert limits["world"]["keys"] == {"max_items": 64}
    assert limits["world"]["entries"] == {"max_items": 1000}
