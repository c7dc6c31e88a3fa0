"""Whole-app backup and restore (DESIGN §12): `python -m src.app backup|restore` and
`GET /api/backup`; a manifest with checksums; refusals for tampered, newer or misplaced
backups; an existing data directory is moved aside, never deleted."""
import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from src.app import create_app
from src.serve import _portability_command
from src.utils import provider
from src.utils.portability.backup import write_backup_file
from src.utils.portability.restore import restore_backup
from src.utils.services.errors import ServiceError
from tests.portability.backup_support import check_consistent, cli
from tests.portability.support import V3_CARD, b64, png, upload

KEY = "sk-ant-backup-test-0123456789"


@pytest.fixture
def filled(app, client):
    """Data worth keeping: an imported persona with an avatar, a session and a cortex edit."""
    persona = upload(client, png({"ccv3": b64(V3_CARD)})).get_json()
    session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    provider.get_cortex_service(app).write_file(persona["id"], "memory.md", "Sam likes tea.")
    return {"persona": persona, "session": session}


def _rewrite(source, target, change) -> None:
    """Copies a zip, letting `change(name, data)` alter entries (None drops one)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = change(info.filename, old.read(info))
            if data is not None:
                new.writestr(info.filename, data)


def test_backup_and_restore_through_the_command_line(filled, data_dir, tmp_path, client):
    path = tmp_path / "backup.zip"
    done = cli(data_dir, "backup", str(path))
    assert done.returncode == 0, done.stderr
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        names = set(archive.namelist())
    assert manifest["format"] == "persona-cortex-backup" and manifest["schema_version"] >= 10
    assert manifest["app_version"] and manifest["created_at"]
    assert {e["path"] for e in manifest["entries"]} == names - {"manifest.json"}
    assert all(len(e["sha256"]) == 64 for e in manifest["entries"])
    pid = filled["persona"]["id"]
    assert f"cortex/custom/{pid}/memory.md" in names and "secrets.json" not in names
    target = tmp_path / "restored"
    # `restore` through the same entry `python -m src.app` dispatches to, in this process (one
    # interpreter start per test is enough to prove the command line's wiring)
    assert _portability_command(["restore", str(path)], str(target)) == 0
    assert check_consistent(target) == 6
    restored = create_app({"DATA_DIR": str(target), "CORTEX_WORKER": False, "TESTING": True})
    try:
        other = restored.test_client()
        assert other.get(f"/api/personas/{pid}").get_json() == client.get(
            f"/api/personas/{pid}").get_json()
        assert other.get(f"/api/personas/{pid}/cortex/memory.md").get_json()["content"] == \
            "Sam likes tea."
        assert other.get(filled["persona"]["avatar_url"]).data == client.get(
            filled["persona"]["avatar_url"]).data
        assert other.get(f"/api/sessions/{filled['session']['id']}").status_code == 200
    finally:
        provider.shutdown_services(restored)


def test_secrets_only_when_asked(filled, app, data_dir, tmp_path):
    provider.get_secret_store(app).save_api_key(KEY)
    plain, secret = tmp_path / "plain.zip", tmp_path / "secret.zip"
    write_backup_file(str(data_dir), str(plain))
    # the command line's own entry, in this process (the subprocess path is tested above)
    assert _portability_command(["backup", str(secret), "--include-secrets"], str(data_dir)) == 0
    with zipfile.ZipFile(plain) as archive:
        assert "secrets.json" not in archive.namelist()
    with zipfile.ZipFile(secret) as archive:
        assert KEY in archive.read("secrets.json").decode()
    target = tmp_path / "restored"
    restore_backup(str(secret), str(target))
    assert oct((target / "secrets.json").stat().st_mode & 0o777) == "0o600"


def test_the_settings_download_is_a_backup_without_secrets(filled, app, client):
    provider.get_secret_store(app).save_api_key(KEY)
    response = client.get("/api/backup")
    assert response.status_code == 200 and response.mimetype == "application/zip"
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    with zipfile.ZipFile(io.BytesIO(response.data)) as archive:
        assert "secrets.json" not in archive.namelist()
        assert "app.db" in archive.namelist()


def _refused(path, target, reason: str, force: bool = False) -> None:
    with pytest.raises(ServiceError) as caught:
        restore_backup(str(path), str(target), force=force)
    assert caught.value.extra["reason"] == reason, caught.value.message
    assert not target.exists() or reason == "target_not_empty"


@pytest.fixture
def backup(filled, data_dir, tmp_path):
    path = tmp_path / "good.zip"
    write_backup_file(str(data_dir), str(path))
    return path


def test_a_tampered_entry_is_refused(backup, tmp_path):
    bad = tmp_path / "bad.zip"
    _rewrite(backup, bad, lambda n, d: d.replace(b"Sam likes tea.", b"Sam likes rum.")
             if n.endswith("memory.md") else d)
    _refused(bad, tmp_path / "t", "checksum_mismatch")


def test_an_unlisted_or_missing_entry_is_refused(backup, tmp_path):
    extra = tmp_path / "extra.zip"
    _rewrite(backup, extra, lambda n, d: d)
    with zipfile.ZipFile(extra, "a") as archive:
        archive.writestr("cortex/default/notes.md", "x")
    _refused(extra, tmp_path / "t1", "checksum_mismatch")
    missing = tmp_path / "missing.zip"
    _rewrite(backup, missing, lambda n, d: None if n.endswith("soul.md") else d)
    _refused(missing, tmp_path / "t2", "checksum_mismatch")


def test_a_backup_from_a_newer_schema_is_refused(backup, tmp_path):
    newer = tmp_path / "newer.zip"

    def change(name, data):
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["migrations"].append("9999_future")
        manifest["schema_version"] = 9999
        return json.dumps(manifest).encode()
    _rewrite(backup, newer, change)
    _refused(newer, tmp_path / "t", "newer_schema")
    with pytest.raises(ServiceError, match="newer version of the app"):
        restore_backup(str(newer), str(tmp_path / "t"))


@pytest.mark.parametrize("version", [float("nan"), 99999, True])
def test_a_backup_of_an_unknown_format_version_is_refused_by_the_command(backup, tmp_path,
                                                                       version):
    """`python -m src.app restore` reads only the format versions it knows (issue 21)."""
    odd = tmp_path / "odd.zip"

    def change(name, data):
        if name != "manifest.json":
            return data
        return json.dumps({**json.loads(data), "format_version": version}).encode()
    _rewrite(backup, odd, change)
    target = tmp_path / "restored"
    done = cli(target, "restore", str(odd))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "format version" in done.stdout and not target.exists()


def test_a_backup_with_a_path_outside_the_layout_is_refused(backup, tmp_path):
    evil = tmp_path / "evil.zip"
    _rewrite(backup, evil, lambda n, d: d)
    with zipfile.ZipFile(evil, "a") as archive:
        archive.writestr("../escape.txt", "x")
    _refused(evil, tmp_path / "t", "path_traversal")
    assert not (tmp_path / "escape.txt").exists()


def test_a_non_empty_data_dir_needs_force_and_is_moved_aside(backup, tmp_path):
    target = tmp_path / "live"
    target.mkdir()
    (target / "keep.txt").write_text("old data")
    _refused(backup, target, "target_not_empty")
    assert (target / "keep.txt").read_text() == "old data"
    result = restore_backup(str(backup), str(target), force=True)
    moved = result["moved_aside"]
    assert moved and os.path.dirname(moved) == str(tmp_path)
    assert Path(moved, "keep.txt").read_text() == "old data"
    assert check_consistent(target) == 6 and not (target / "keep.txt").exists()
    leftovers = [n for n in os.listdir(tmp_path) if ".restore-" in n]
    assert leftovers == []


def test_a_refused_restore_leaves_no_staging_directory(backup, tmp_path):
    bad = tmp_path / "bad.zip"
    _rewrite(backup, bad, lambda n, d: b"garbage" if n == "app.db" else d)
    _refused(bad, tmp_path / "t", "checksum_mismatch")
    assert [n for n in os.listdir(tmp_path) if ".restore-" in n] == []
