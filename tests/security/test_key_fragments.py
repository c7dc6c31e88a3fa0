"""No part of the API key leaves the app: an upstream error echoing a fragment of it (`prefix…
last4`) reaches neither the chat's error event nor the log; credentials in query strings and
`Bearer` values are masked in every log record, whatever their length."""
import logging

import pytest

from src.utils.logsafe import mask_credentials, register_secret
from tests.chat.chat_support import SseStream
from tests.fakes.claude import replies

KEY = "sk-ant-api03-SECRETKEYabcdefghijklmnop-7890"
ECHO = "invalid request for key sk-ant-api03-SECRETKEYab...7890 (ghijklmn)"


@pytest.fixture
def app_config(app_config, claude):
    return {**app_config, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": claude.url}


def test_an_upstream_echo_of_a_key_fragment_reaches_neither_the_user_nor_the_log(
        server, client, claude, caplog):
    claude.default = replies.scripted(lambda body: replies.bad_request(ECHO))
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()["id"]
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session, "message": "Hello"}) as stream:
        kind, data = stream.events()[-1]
    assert (kind, data["code"]) == ("error", "invalid_request")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for text in (data["message"], logged):
        assert "invalid request for key" in text
        for fragment in ("SECRETKEY", "sk-ant-api03-S", "ghijklmn"):
            assert fragment not in text


@pytest.mark.parametrize("line,hidden", [
    ('"GET /ws/chat?token=abc HTTP/1.1" 401', "abc"),
    ('"GET /?access_token=s3cr3t-but-short&x=1 HTTP/1.1" 200', "s3cr3t-but-short"),
    ("GET /api/x?api_key=k&key=zz", "zz"),
    ("Authorization: Bearer tiny", "tiny"),
])
def test_credentials_of_any_length_are_masked_in_log_lines(app, line, hidden, caplog):
    assert hidden not in mask_credentials(line)
    logging.getLogger("gunicorn.access").warning(line)
    assert hidden not in caplog.records[-1].getMessage()


def test_a_registered_secret_is_masked_in_pieces():
    register_secret("pc-token-Zq81xYw7Lm0Nv3Rt")
    masked = mask_credentials("seen xYw7Lm0Nv3 and pc-token-Zq8 and Zq81xYw")
    assert "xYw7Lm0Nv3" not in masked and "pc-token-Zq8" not in masked
    assert "Zq81xYw" in masked  # 7 characters: too short to tell apart from ordinary text
