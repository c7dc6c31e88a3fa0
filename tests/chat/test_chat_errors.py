"""Every upstream failure ends the stream with an `error` event; the user's message survives."""
import json

import pytest

from src.utils import provider
from tests.chat.chat_support import (
    API_KEY,
    BOTH_PROVIDERS,
    ChatSocketClient,
    SseStream,
    chat_requests,
    live_config,
)
from tests.fakes.claude import replies

PARTIAL = replies.text("Once upon a time there was a fox", chunks=[
    "Once upon", " a time", " there was", " a fox"])


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, ANTHROPIC_TIMEOUT=3.0)  # room for a loaded machine


FAILURES = [
    pytest.param(replies.authentication_error(), "authentication_failed", False, id="401"),
    pytest.param(replies.credit_exhausted(), "credit_balance_exhausted", False, id="credit"),
    pytest.param(replies.rate_limited(), "rate_limited", True, id="429"),
    pytest.param(replies.overloaded(), "overloaded", True, id="529"),
    pytest.param(replies.server_error(), "api_error", True, id="500"),
    pytest.param(replies.bad_request("messages: bad"), "invalid_request", False, id="400"),
    pytest.param(replies.hang(), "timeout", True, id="timeout"),
    pytest.param(replies.drop(after_events=0), "connection_error", True, id="dropped-before-text"),
]


@pytest.mark.parametrize("reply,code,retryable", FAILURES)
@BOTH_PROVIDERS
def test_upstream_failure_before_any_text(server, script, make_session, rows, reply, code,
                                          retryable):
    session = make_session()
    script.reply(reply)
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session["id"], "message": "Are you there?"}) as stream:
        assert stream.status == 200
        events = stream.events()
    assert [kind for kind, _ in events] == ["start", "error"]
    error = events[-1][1]
    assert error["code"] == code
    assert error["retryable"] is retryable
    assert error["message"] and "Traceback" not in error["message"]
    assert API_KEY not in json.dumps(events)
    stored = rows("SELECT role, content, status, streaming, error FROM messages ORDER BY id")
    assert stored[0] == {"role": "user", "content": "Are you there?", "status": "complete",
                         "streaming": 0, "error": None}
    assert stored[1] == {"role": "assistant", "content": "", "status": "incomplete",
                         "streaming": 0, "error": stored[1]["error"]}
    assert json.loads(stored[1]["error"]) == {"code": code, "message": error["message"],
                                              "retryable": retryable}


MID_STREAM = [
    pytest.param(replies.drop(after_events=6, base=PARTIAL), "connection_error", id="drop"),
    pytest.param(replies.stream_error("overloaded_error", "Overloaded", after_events=6,
                                      base=PARTIAL), "overloaded", id="error-event"),
    pytest.param(replies.stream_error("api_error", "Internal", after_events=6, base=PARTIAL),
                 "api_error", id="api-error-event"),
    pytest.param(replies.unfinished(base=PARTIAL), "connection_error", id="no-message-stop"),
]


@pytest.mark.parametrize("reply,code", MID_STREAM)
@BOTH_PROVIDERS
def test_failure_mid_stream_keeps_the_partial_reply_marked_incomplete(server, script,
                                                                      make_session, rows,
                                                                      reply, code):
    session = make_session()
    script.reply(reply)
    with ChatSocketClient(server.ws_url) as ws:
        events = ws.chat(session["id"], "Tell me a story")
    kinds = [event["type"] for event in events]
    assert kinds[0] == "start" and kinds[-1] == "error" and "chunk" in kinds
    assert events[-1]["code"] == code and events[-1]["retryable"] is True
    partial = "".join(event["text"] for event in events if event["type"] == "chunk")
    assert rows("SELECT role, content, status FROM messages ORDER BY id") == [
        {"role": "user", "content": "Tell me a story", "status": "complete"},
        {"role": "assistant", "content": partial, "status": "incomplete"},
    ]


class TestWithoutAKey:
    @pytest.fixture
    def app_config(self, app_config):
        return {**app_config, "ANTHROPIC_API_KEY": None}

    def test_the_message_is_kept_and_the_error_says_what_to_do(self, server, claude,
                                                                make_session, rows):
        session = make_session()
        with ChatSocketClient(server.ws_url) as ws:
            events = ws.chat(session["id"], "Hello?")
        assert events[-1]["type"] == "error" and events[-1]["code"] == "not_configured"
        assert "Settings" in events[-1]["message"]
        assert rows("SELECT role, content, error FROM messages") == [
            {"role": "user", "content": "Hello?", "error": None},
            {"role": "assistant", "content": "", "error": json.dumps(
                {"code": "not_configured", "message": events[-1]["message"], "retryable": False})}]
        assert claude.requests == []


@BOTH_PROVIDERS
def test_a_failed_turn_is_answered_by_regenerate(server, claude, script, make_session, rows):
    session = make_session()
    script.reply(replies.overloaded(), "Here I am.")
    with ChatSocketClient(server.ws_url) as ws:
        assert ws.chat(session["id"], "Hello?")[-1]["code"] == "overloaded"
        ws.send(type="regenerate", session_id=session["id"])
        events = ws.until("done", "error")
    assert events[-1]["type"] == "done" and events[-1]["text"] == "Here I am."
    assert chat_requests(claude)[-1].messages == [{"role": "user", "content": "Hello?"}]
    assert [r["role"] for r in rows("SELECT role FROM messages ORDER BY id")] == [
        "user", "assistant"]


def test_an_unexpected_server_fault_is_an_internal_error_event(server, app, claude, script,
                                                               make_session, rows, caplog):
    session = make_session()
    provider.get_db(app).conn().execute("DROP TABLE settings")
    with ChatSocketClient(server.ws_url) as ws:
        events = ws.chat(session["id"], "Still there?")
        assert [e["type"] for e in events] == ["start", "error"]
        assert events[-1]["code"] == "internal_error" and events[-1]["retryable"] is True
        assert "Traceback" not in events[-1]["message"]
        ws.send(type="stop")
        ws.send(type="subscribe", persona_id="default")
        assert ws.next()["type"] == "subscribed"
    assert rows("SELECT role, content, json_extract(error, '$.code') AS code FROM messages") == [
        {"role": "user", "content": "Still there?", "code": None},
        {"role": "assistant", "content": "", "code": "internal_error"}]
    assert claude.requests == []
    assert any("Chat turn failed" in r.getMessage() for r in caplog.records)
