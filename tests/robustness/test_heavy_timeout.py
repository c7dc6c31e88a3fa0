"""A CPU-heavy step has a time limit (`cooperative.HEAVY_SECONDS`): one running past it gets a
503 `work_timeout`, its heavy-work process is killed (the worker's one heavy slot is free
again) and nothing it was computing is stored; the worker keeps serving. The real server model
(`python -m src.app`, one gevent worker), with the limit set far below what re-encoding a
picture at the pixel cap takes (its process's start alone is longer)."""
import os
from pathlib import Path

from tests.robustness.hostile_uploads import upload, zero_png
from tests.robustness.servers import ServerProcess


def _descendants(root: int) -> dict[int, str]:
    """pid → command line of every process under `root`."""
    parents: dict[int, int] = {}
    lines: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            lines[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(
                b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    for pid in lines:
        cursor = pid
        while cursor in parents and cursor != root:
            cursor = parents[cursor]
        if cursor == root and pid != root:
            found[pid] = lines[pid]
    return found


def test_a_heavy_step_past_its_limit_is_stopped_with_a_503(tmp_path):
    with ServerProcess(tmp_path / "data", tmp_path / "server.log", PERSONA_WORKERS="1",
                       PERSONA_HEAVY_SECONDS="0.05") as server:
        persona = server.call("POST", "/api/personas", {"name": "Mia"})[2]
        status, body = upload(server.port, f"/api/personas/{persona['id']}/avatar",
                              zero_png(4096, 4096), "PUT")
        assert status == 503, body
        assert body["error"]["code"] == "work_timeout", body
        assert "0.05 s" in body["error"]["message"]
        assert not [line for line in _descendants(server.proc.pid).values()
                    if "heavy_child" in line], "the heavy-work process outlived its step"
        assert server.call("GET", "/healthz")[0] == 200
        assert server.call("GET", f"/api/personas/{persona['id']}")[2]["avatar_url"] is None
