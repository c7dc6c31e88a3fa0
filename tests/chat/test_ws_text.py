"""The chat socket's own text frames (src/utils/ws_text.py): read back by wsproto's client, with
and without permessage-deflate, at each length encoding, and over the real server by a client
that negotiated deflate (as browsers do)."""
import json
import socket

import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request, TextMessage
from wsproto.extensions import PerMessageDeflate

from src.utils.ws_text import text_frame
from tests.chat.chat_support import TIMEOUT, live_config
from tests.fakes.claude import replies

# 7-bit, 16-bit and 64-bit payload lengths, their edges, and text that is not ASCII
TEXTS = ["", "a" * 125, "a" * 126, "é" * 63, "b" * 65535, "c" * 65536, "☃ " * 70_000,
         "ok \U0001f600"]


def _client(deflate: bool) -> WSConnection:
    """A wsproto client past its handshake with a wsproto server (deflate agreed or not)."""
    client, server = WSConnection(ConnectionType.CLIENT), WSConnection(ConnectionType.SERVER)
    extensions = [PerMessageDeflate()] if deflate else []
    server.receive_data(client.send(Request(host="x", target="/ws", extensions=extensions)))
    request = next(server.events())
    assert isinstance(request, Request)
    client.receive_data(server.send(AcceptConnection(extensions=[PerMessageDeflate()]
                                                     if deflate else [])))
    accepted = next(client.events())
    assert isinstance(accepted, AcceptConnection)
    assert bool(accepted.extensions) is deflate
    return client


@pytest.mark.parametrize("deflate", [False, True])
def test_each_frame_reads_back_as_the_text_it_holds(deflate):
    client = _client(deflate)
    for text in TEXTS:
        client.receive_data(text_frame(text))
        received = "".join(event.data for event in client.events()
                           if isinstance(event, TextMessage))
        assert received == text, (len(received), len(text))


def test_a_frame_is_one_unmasked_final_text_frame():
    frame = text_frame("hi")
    assert frame == b"\x81\x02hi"
    assert text_frame("x" * 200)[:4] == b"\x81\x7e\x00\xc8"
    assert text_frame("x" * 70_000)[:10] == b"\x81\x7f" + (70_000).to_bytes(8, "big")


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def test_a_client_that_negotiated_deflate_reads_a_whole_turn(server, script, make_session):
    """The server accepts permessage-deflate; its chat frames, sent uncompressed, still read."""
    session = make_session()
    script.reply(replies.text("Hello there", chunks=["Hello", " there"]))
    client = WSConnection(ConnectionType.CLIENT)
    host, port = server.ws_url.split("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(client.send(Request(host=f"{host}:{port}", target="/ws/chat",
                                         extensions=[PerMessageDeflate()])))
        frame = {"type": "chat", "session_id": session["id"], "message": "Hi"}
        events, accepted = [], False
        while not events or events[-1]["type"] not in ("done", "error"):
            data = sock.recv(65536)
            assert data, "the server closed the connection"
            client.receive_data(data)
            for event in client.events():
                if isinstance(event, AcceptConnection):
                    assert event.extensions, "the server did not agree to permessage-deflate"
                    accepted = True
                    sock.sendall(client.send(TextMessage(data=json.dumps(frame))))
                elif isinstance(event, TextMessage):
                    events.append(json.loads(event.data))
    assert accepted
    turn = [event for event in events if event["type"] in ("start", "chunk", "done")]
    assert [event["type"] for event in turn] == ["start", "chunk", "chunk", "done"]
    assert turn[-1]["text"] == "Hello there"
