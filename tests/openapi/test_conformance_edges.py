"""Conformance at the edges: a foreign Host, sign-in without a token, the WebSocket's frames."""
import json

import jsonschema_rs
import pytest
import websocket

from src.utils.openapi import build_document
from tests.openapi.support import Conformance


@pytest.fixture
def conform():
    return Conformance(build_document())


def test_foreign_host_without_token(client, conform):
    response = client.get("/api/personas", headers={"Host": "attacker.example"})
    assert response.status_code == 403
    conform(response, "GET", "/api/personas")


def test_sign_in_without_token(client, conform):
    conform(client.get("/signin"), "GET", "/signin")
    conform(client.post("/signin", json={"token": "x"}), "POST", "/signin")


def test_websocket_frames_conform(app, server, conform):
    document = conform.document
    frames = document["paths"]["/ws/chat"]["get"]["x-websocket"]
    root = {"components": document["components"]}

    def validator(schema):
        return jsonschema_rs.Draft202012Validator({**root, **schema})

    server_frames = {kind: validator(schema) for kind, schema in frames["server_frames"].items()}
    client_frames = {kind: validator(schema) for kind, schema in frames["client_frames"].items()}
    session = app.test_client().post("/api/sessions", json={"persona_id": "default"}).get_json()
    sent = [{"type": "subscribe", "persona_id": "default"},
            {"type": "chat", "session_id": session["id"], "message": "Hi"},
            {"type": "regenerate", "session_id": session["id"]},
            {"type": "chat", "session_id": "0000000000000000", "message": "Hi"}]
    socket = websocket.create_connection(server.ws_url + "/ws/chat", timeout=10)
    received = []
    try:
        for frame in sent:
            client_frames[frame["type"]].validate(frame)
            socket.send(json.dumps(frame))
            while True:
                received.append(json.loads(socket.recv()))
                if received[-1]["type"] in ("subscribed", "done", "error"):
                    break
    finally:
        socket.close()
    kinds = [frame["type"] for frame in received]
    assert kinds.count("done") == 2 and kinds[-1] == "error", kinds
    for frame in received:
        server_frames[frame["type"]].validate(frame)
    plain = app.test_client().get("/ws/chat")
    conform(plain, "GET", "/ws/chat")
