"""Every request reads the key as it is now (DESIGN §15 "Keys", issue 23): a worker keeps what
secrets.json parsed into only while the file's stat signature stands (services/secrets.py,
`cortex/snapshots.py` `KeptFile`), so a key another process saved, replaced, deleted or moved
to another URL is used, or no longer sent, from that worker's very next request.

The other process is the app (`client`); the worker is a second set of services on the same
data directory whose clock says every file is settled, so its parse is kept whenever the rules
allow (a real worker only keeps it once the file is `RACY_SECONDS` old)."""
import json
import logging
import os
import time

import pytest

from src.utils.api_request import ApiClient, EndpointChecks, RequestConfig
from src.utils.services.secrets import SecretStore
from src.utils.services.settings_service import SettingsService
from src.utils.storage import Database
from tests.fakes.claude import FakeClaude, replies

from .keys import ENV_KEY, OTHER_KEY, STORED_KEY

MODEL = "claude-test"
LATER = 10 ** 12  # 1000 s ahead: every file counts as settled, so its parse is kept


def _worker(data_dir, claude, clock_offset: int) -> tuple[ApiClient, Database]:
    """Another worker's settings and API client on the same data directory (built as
    services_root builds them, with the environment of the app's config)."""
    db = Database(os.path.join(data_dir, "app.db"))
    secrets = SecretStore(str(data_dir), clock=lambda: time.time_ns() + clock_offset)
    settings = SettingsService(db, secrets, EndpointChecks(5.0, MODEL, claude.url),
                               default_model=MODEL, env_api_key=ENV_KEY,
                               env_base_urls={"anthropic": claude.url})
    return ApiClient(timeout=5.0, max_retries=0, default_model=MODEL,
                     connection_source=settings.connection), db


@pytest.fixture
def worker(app, data_dir, claude):
    api, db = _worker(data_dir, claude, LATER)
    with api:
        yield api
    db.close()


def _key_sent(api: ApiClient, fake) -> str | None:
    """The key the worker's next request carried to `fake` (None: it sent none, or nothing)."""
    before = len(fake.requests)
    fake.enqueue(replies.text("Hi."))
    api.request(RequestConfig(system_prompt="s", messages=[{"role": "user", "content": "Hi"}]))
    sent = fake.requests[before:]
    if not sent:
        return None
    return sent[0].headers.get("authorization", "").removeprefix("Bearer ") or None


def _store(client, claude, key: str) -> None:
    claude.enqueue(replies.text("ok"))  # the upstream check of the new key
    response = client.put("/api/settings/api-key", json={"api_key": key})
    assert response.status_code == 200, response.get_json()


def test_a_key_saved_replaced_or_deleted_by_another_process_counts_at_the_next_request(
        worker, client, claude):
    assert _key_sent(worker, claude) == ENV_KEY
    _store(client, claude, STORED_KEY)
    assert _key_sent(worker, claude) == STORED_KEY
    assert _key_sent(worker, claude) == STORED_KEY  # kept: the file did not change
    _store(client, claude, OTHER_KEY)
    assert _key_sent(worker, claude) == OTHER_KEY
    assert client.delete("/api/settings/api-key").status_code == 200
    assert _key_sent(worker, claude) == ENV_KEY


def test_a_key_moved_to_another_url_by_another_process_goes_there_and_nowhere_else(
        worker, client, claude):
    _store(client, claude, STORED_KEY)
    assert _key_sent(worker, claude) == STORED_KEY
    with FakeClaude(api_key=OTHER_KEY) as other:
        claude_requests = len(claude.requests)
        other.enqueue(replies.text("ok"))
        moved = client.put("/api/settings", json={"base_url": other.url, "api_key": OTHER_KEY})
        assert moved.status_code == 200, moved.get_json()
        assert _key_sent(worker, other) == OTHER_KEY
        assert len(claude.requests) == claude_requests
        back = client.put("/api/settings", json={"base_url": None})  # no key is moved back
        assert back.status_code == 200, back.get_json()
        assert _key_sent(worker, claude) == ENV_KEY  # the environment's key belongs there
        assert not any(OTHER_KEY in json.dumps(dict(r.headers)) for r in claude.requests)


@pytest.mark.parametrize("clock_offset", [LATER, 0], ids=["settled", "young"])
def test_a_same_size_rewrite_in_place_is_seen_at_the_next_request(app, client, claude,
                                                                   data_dir, clock_offset):
    """The file rewritten in place (same inode, same size) with its mtime put back: kept or
    not, the worker reads it again. Settled, the ctime (which nobody can set) gives it away;
    young (written within RACY_SECONDS, as here, where both writes share a second), nothing
    was kept, which is what covers a file system whose times are too coarse to differ
    (`test_store_snapshots.py` checks that rule with a stat held equal)."""
    api, db = _worker(data_dir, claude, clock_offset)
    try:
        _store(client, claude, STORED_KEY)
        assert _key_sent(api, claude) == STORED_KEY
        path = data_dir / "secrets.json"
        before = os.stat(path)
        replaced = path.read_bytes().replace(STORED_KEY.encode(), b"X" * len(STORED_KEY))
        with open(path, "r+b") as handle:
            handle.write(replaced)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(path)
        assert (after.st_ino, after.st_size, after.st_mtime_ns) == \
            (before.st_ino, before.st_size, before.st_mtime_ns)
        assert _key_sent(api, claude) == "X" * len(STORED_KEY)
    finally:
        api.close()
        db.close()


def test_an_unreadable_file_is_reported_once_per_version_and_ignored(worker, client, claude,
                                                                       data_dir, caplog):
    _store(client, claude, STORED_KEY)
    assert _key_sent(worker, claude) == STORED_KEY  # parsed and kept
    path = data_dir / "secrets.json"
    caplog.clear()
    path.write_text('{"anthropic_api_key": ')  # another process broke it
    assert [_key_sent(worker, claude) for _ in range(3)] == [ENV_KEY] * 3
    path.write_text('["not", "an", "object"]')
    assert _key_sent(worker, claude) == ENV_KEY
    reports = [r for r in caplog.records if r.getMessage() == "secrets.json is unreadable; "
               "ignoring it" and r.levelno == logging.ERROR]
    assert len(reports) == 2
    _store(client, claude, OTHER_KEY)
    assert _key_sent(worker, claude) == OTHER_KEY
