"""Hostile WebSocket frames: whatever arrives (a `type` that is a list or an object, a non-object,
non-JSON, binary, huge, a lone surrogate in any field) gets one `error` event with a stable code,
nothing is stored, and the socket stays usable. Fuzzed with Hypothesis over arbitrary JSON."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from src.utils import provider
from src.utils.services.chat_frames import FRAME_MAX, TYPES, FrameError, parse_frame
from src.utils.services.chat_socket import ChatSocket
from tests.chat.chat_support import ChatSocketClient, live_config

LONE = "\ud800"
CODES = {"invalid_request", "session_not_found", "nothing_to_regenerate", "busy"}
FIELDS = ("type", "session_id", "message", "persona_id")
_TEXT = st.one_of(st.text(max_size=20),
                  st.sampled_from([LONE, f"a{LONE}b", "\udfff", "\x00", "chat", "default"]))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12)


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


class _RecordingSocket:
    """Stands in for the WebSocket: each sent frame must be encodable text holding JSON."""

    def __init__(self):
        self.sent: list[dict] = []

    def send(self, frame: str) -> None:
        self.sent.append(json.loads(frame.encode("utf-8")))


def _counts(app) -> tuple:
    conn = provider.get_db(app).conn()
    return tuple(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                 for table in ("messages", "sessions", "personas"))


@pytest.mark.parametrize("frame, field", [
    ('{"type": ["chat"]}', "type"),
    ('{"type": {"a": 1}}', "type"),
    ('{"type": null}', "type"),
    ('{"type": 7}', "type"),
    ('{"type": "nope"}', "type"),
    ("[]", None), ('"chat"', None), ("1", None), ("null", None), ("not json", None),
    (b"\x00\x01binary", None),
    ("x" * (FRAME_MAX + 1), None),
    ('{"type": "chat", "session_id": "SESSION", "message": "hi \\ud800"}', "message"),
    ('{"type": "chat", "session_id": "SESSION", "message": "hi", "\\udfff": 1}', "\\udfff"),
    ('{"type": "chat", "session_id": ["SESSION"], "message": "hi"}', None),
    ('{"type": "chat", "session_id": "SESSION", "message": {"a": 1}}', "message"),
    ('{"type": "chat", "session_id": "SESSION", "message": ["hi"]}', "message"),
    ('{"type": "regenerate", "session_id": {"id": "SESSION"}}', None),
    ('{"type": "subscribe", "persona_id": ["default"]}', None),
])
def test_a_hostile_frame_gets_an_error_event_and_the_socket_lives_on(
        server, script, make_session, snapshot, frame, field):
    session = make_session()
    if isinstance(frame, str):
        frame = frame.replace("SESSION", session["id"])
    before = snapshot()
    with ChatSocketClient(server.ws_url) as ws:
        ws.send_raw(frame)
        error = ws.next()
        assert error["type"] == "error" and error["code"] in CODES, error
        assert error.get("field") == field, error
        assert snapshot() == before
        ws.send(type="subscribe", persona_id="default")
        assert ws.next() == {"type": "subscribed", "persona_id": "default"}
        assert ws.chat(session["id"], "still here?")[-1]["type"] == "done"


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON)
def test_the_parser_takes_any_json_value_without_crashing(value):
    raw = json.dumps(value)
    try:
        frame = parse_frame(raw)
    except FrameError as err:
        assert str(err) and str(err).encode("utf-8")
        return
    assert isinstance(frame, dict) and frame["type"] in TYPES
    assert json.dumps(frame, ensure_ascii=False).encode("utf-8")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(TYPES + ("other",)),
       fields=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4),
       extra=JSON)
def test_every_field_with_each_json_type_is_answered_by_the_handler(app, kind, fields, extra):
    ws = _RecordingSocket()
    sock = ChatSocket(ws, provider.get_chat_service(app))
    before = _counts(app)
    for raw in (json.dumps({"type": kind, **fields}), json.dumps(extra)):
        sock._handle(raw)
    assert all(event["type"] in ("error", "subscribed") for event in ws.sent), ws.sent
    assert all(event["code"] in CODES for event in ws.sent if event["type"] == "error"), ws.sent
    assert _counts(app) == before
    sock._handle(json.dumps({"type": "subscribe", "persona_id": "default"}))
    assert ws.sent[-1] == {"type": "subscribed", "persona_id": "default"}


@settings(max_examples=200, deadline=None, derandomize=True)
@given(raw=st.one_of(st.text(max_size=60), st.binary(max_size=60)))
def test_the_parser_takes_any_text_or_bytes(raw):
    try:
        frame = parse_frame(raw)
    except FrameError:
        return
    assert frame["type"] in TYPES
