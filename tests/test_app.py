"""The skeleton: factory, health, JSON errors, provider, config and the serve entry."""
import os
import subprocess
import sys
import urllib.request

import pytest

from src.app import create_app, is_loopback
from src.utils import provider
from tests.support.live_server import _whole_bodies


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_unknown_path_is_json_404(client):
    response = client.get("/api/nope")
    assert response.status_code == 404
    assert response.is_json
    assert response.get_json()["error"]["code"] == "not_found"


def test_provider_raises_before_init():
    from flask import Flask
    bare = Flask("bare")
    with bare.app_context(), pytest.raises(RuntimeError, match="not initialised"):
        provider.get_api_client()


def test_provider_hands_out_one_client(app):
    with app.app_context():
        assert provider.get_api_client() is provider.get_api_client()


def test_database_migrated_in_data_dir(app, data_dir):
    assert (data_dir / "app.db").exists()
    with app.app_context():
        names = {r["name"] for r in provider.get_db().conn().execute(
            "SELECT name FROM schema_migrations")}
    assert "0001_settings" in names


def test_environment_and_dotenv(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("PERSONA_MODEL=model-from-dotenv\nPERSONA_PORT=6001\n")
    monkeypatch.setenv("PERSONA_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("PERSONA_PORT", "6002")
    app = create_app()
    assert app.config["MODEL"] == "model-from-dotenv"
    assert app.config["PORT"] == 6002
    assert app.config["DATA_DIR"] == str(tmp_path / "d")


@pytest.mark.parametrize("host,expected", [
    ("127.0.0.1", True), ("localhost", True), ("::1", True),
    ("0.0.0.0", False), ("192.168.1.5", False), ("example.org", False),
])
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_entry_point_refuses_public_bind_without_token(tmp_path):
    env = {**os.environ, "PERSONA_DATA_DIR": str(tmp_path), "PERSONA_HOST": "0.0.0.0"}
    env.pop("PERSONA_ACCESS_TOKEN", None)
    result = subprocess.run([sys.executable, "-m", "src.app"], env=env, capture_output=True,
                            timeout=30)
    assert result.returncode == 2
    assert b"PERSONA_ACCESS_TOKEN" in result.stderr


def test_live_server_fixture_serves(server):
    with urllib.request.urlopen(server.url + "/healthz", timeout=5) as response:
        assert response.status == 200


class _Body(list):
    """A response body that records whether it was closed (a static file's holds the file)."""

    closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("method, status, headers", [
    ("GET", "304 NOT MODIFIED", []),  # a browser revalidating a cached script
    ("GET", "200 OK", [("Content-Length", "2")]),
    ("HEAD", "200 OK", []),
])
def test_the_live_server_closes_every_bodiless_or_sized_response_before_writing(
        method, status, headers):
    """werkzeug's development server closes a response only after a cleanup that fails on a
    connection the browser already reset; these are closed first (`live_server._whole_bodies`),
    so no file waits for the garbage collector and its ResourceWarning."""
    body = _Body([b"ok"] if headers else [])

    def app(environ, start_response):
        start_response(status, headers)
        return body
    _whole_bodies(app)({"REQUEST_METHOD": method}, lambda *args: None)
    assert body.closed


def _open_database_files(data_dir) -> list[str]:
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(data_dir)) and "app.db" in target:
            names.append(target)
    return names


def test_shutting_down_closes_the_database_connections(app_config, data_dir):
    """An app that something still references after shutdown (test tools do) holds no
    descriptors of the database: a long test run would otherwise run out of them."""
    import threading
    app = create_app(app_config)
    with app.app_context():
        threads = [threading.Thread(target=lambda: (provider.get_persona_service(app).list(),
                                                    provider.get_db(app).close_thread()))
                   for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        provider.get_persona_service(app).list()
    assert _open_database_files(data_dir), "the pool keeps connections open while running"
    provider.shutdown_services(app)
    assert _open_database_files(data_dir) == []
