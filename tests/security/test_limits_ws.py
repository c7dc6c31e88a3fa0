"""Size limits on /ws/chat over a real socket: an over-long frame or message is an `error` event
and the connection lives on; a message over the body limit closes the socket (1009)."""
import json

import pytest
import websocket

LIMIT = 1024 * 1024
TIMEOUT = 10


@pytest.fixture
def ws(server):
    """A client of /ws/chat."""
    sock = websocket.create_connection(server.ws_url + "/ws/chat", timeout=TIMEOUT)
    yield sock
    sock.close()
    sock.shutdown()  # close() skips the socket once the server has closed the connection


def _event(ws) -> dict:
    return json.loads(ws.recv())


def _still_works(ws) -> bool:
    ws.send(json.dumps({"type": "subscribe", "persona_id": "default"}))
    return _event(ws) == {"type": "subscribed", "persona_id": "default"}


@pytest.mark.parametrize("frame", [
    json.dumps({"type": "subscribe", "persona_id": "default", "pad": "x" * 40_000}),
    "[" * 15_000 + "]" * 15_000,
    "{" * 10 + "not json",
])
def test_a_frame_the_socket_cannot_take_is_an_error_event(ws, frame):
    ws.send(frame)
    event = _event(ws)
    assert event["type"] == "error" and event["code"] == "invalid_request"
    assert _still_works(ws)


def test_a_chat_message_over_its_limit_is_refused_and_not_stored(ws, client, snapshot):
    sid = client.post("/api/sessions", json={"persona_id": "default"}).get_json()["id"]
    before = snapshot()
    ws.send(json.dumps({"type": "chat", "session_id": sid, "message": "m" * 32_001}))
    event = _event(ws)
    assert event["type"] == "error" and "32000" in event["message"]
    assert snapshot() == before
    assert _still_works(ws)


def test_a_message_over_the_body_limit_closes_the_socket_without_harm(server, ws):
    ws.send("x" * (LIMIT + 1))
    opcode, data = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE
    assert int.from_bytes(data[:2], "big") == 1009
    fresh = websocket.create_connection(server.ws_url + "/ws/chat", timeout=TIMEOUT)
    try:
        assert _still_works(fresh)
    finally:
        fresh.close()
