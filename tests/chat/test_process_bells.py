"""Process bells (utils/process_bells.py): a mark left on a reply's row rings the generating
processes, so they look at once instead of four times a second, and a mark nobody rang for is
still heard at the reply's next checkpoint; a bell of one kind hears no ring of another."""
import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from src.utils import provider
from src.utils.process_bells import ProcessBells
from tests.chat.chat_support import ChatSocketClient, eventually, live_config
from tests.fakes.claude import replies

DEADLINE = 10.0  # bounds a failure only
ROOT = Path(__file__).resolve().parents[2]
WORDS = [f"w{i} " for i in range(6)]


def test_a_ring_from_any_process_wakes_each_listening_process(tmp_path):
    locks = str(tmp_path / "locks")
    heard = threading.Event()
    listening = ProcessBells(locks, "replies")
    listening.listen(heard.set)
    try:
        (own,) = os.listdir(locks)
        assert own.startswith(f"replies-{os.getpid()}-")
        for _ in range(2):
            heard.clear()
            subprocess.run([sys.executable, "-c", "import sys; from src.utils.process_bells import "
                            "ProcessBells; ProcessBells(sys.argv[1], 'replies').ring()",
                            locks], check=True, cwd=ROOT)
            assert heard.wait(DEADLINE)
    finally:
        listening.close()
    assert os.listdir(locks) == []  # its bell goes with it


def test_ringing_with_no_bells_or_no_listener_does_nothing(tmp_path):
    ProcessBells(str(tmp_path / "nowhere"), "replies").ring()
    locks = tmp_path / "locks"
    locks.mkdir()
    os.mkfifo(locks / "replies-999999999.bell")  # a bell nobody answers
    (locks / "sessions.lock").write_bytes(b"")  # not a bell
    ProcessBells(str(locks), "replies").ring()


def test_the_bells_of_ended_processes_are_removed_when_another_listens(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    os.mkfifo(locks / f"replies-{ended}-1.bell")
    os.mkfifo(locks / "replies-1-1.bell")  # pid 1 runs (another user's, perhaps): kept
    bells = ProcessBells(str(locks), "replies")
    bells.listen(lambda: None)
    try:
        kept = sorted(os.listdir(locks))
        assert len(kept) == 2 and kept[0] == "replies-1-1.bell"
        assert kept[1].startswith(f"replies-{os.getpid()}-")
    finally:
        bells.close()


def test_two_apps_of_one_process_on_one_data_directory_each_hear_a_ring(tmp_path):
    locks = str(tmp_path / "locks")
    heard = [threading.Event(), threading.Event()]
    apps = [ProcessBells(locks, "replies"), ProcessBells(locks, "replies")]
    for bells, event in zip(apps, heard, strict=True):
        bells.listen(event.set)
    try:
        ProcessBells(locks, "replies").ring()
        assert all(event.wait(DEADLINE) for event in heard)
    finally:
        for bells in apps:
            bells.close()



def test_a_ring_reaches_only_the_bells_of_its_kind(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    os.mkfifo(locks / "replies-1-1.bell")
    reader = os.open(locks / "replies-1-1.bell", os.O_RDONLY | os.O_NONBLOCK)
    try:
        ProcessBells(str(locks), "news").ring()
        assert os.read(reader, 16) == b""  # nothing written (no writer: end of file)
        ProcessBells(str(locks), "replies").ring()
        assert os.read(reader, 16) == b"!"
    finally:
        os.close(reader)


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, REPLY_CHECKPOINT_SECONDS=0.5)


def test_a_stop_mark_nobody_rang_for_is_heard_at_the_next_checkpoint(
        server, script, make_session, data_dir):
    """A tool that edits the row without ringing (or a process that died before it could):
    the generating process still looks at each checkpoint of its replies."""
    gate = threading.Event()
    script.reply(replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    sid = make_session()["id"]
    try:
        with ChatSocketClient(server.ws_url) as ws:
            ws.send(type="chat", session_id=sid, message="Go")
            reply_id = ws.until("start")[-1]["reply_id"]
            assert ws.until("chunk")[-1]["text"] == "w0 "
            with closing(sqlite3.connect(data_dir / "app.db")) as other:
                other.execute("UPDATE messages SET stop_reason = 'stop_requested' "
                              "WHERE id = ?", (reply_id,))
                other.commit()
            assert ws.until("done")[-1]["stop_reason"] == "cancelled"
    finally:
        gate.set()


def test_after_its_replies_end_the_sync_thread_sleeps_until_the_next_starts(
        app, server, script, make_session):
    """Replies ending do not wake it (each turn would cost a wake); its next look, at the
    latest a checkpoint later, finds none running and it sleeps without a timeout."""
    script.reply(replies.text("".join(WORDS), chunks=WORDS))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=make_session()["id"], message="Hi")
        ws.until("done")
    hub = provider.services_of(app).chat.hub
    eventually(lambda: hub.sleeping)


def test_a_look_that_finds_the_row_current_moves_the_next_checkpoint():
    """Unrung, the sync thread looks when a flush falls due; a reply that pauses (nothing new
    since its last flush) moves that time on, instead of being looked at again and again."""
    from src.utils.services.generations import Generation
    generation = Generation("s", 1, 2)
    start = generation.next_flush(5.0)
    generation.caught_up(start + 3.0)  # nothing generated: the (empty) row holds it all
    assert generation.next_flush(5.0) == start + 8.0
    generation.append("more")
    generation.caught_up(start + 4.0)  # text the row lacks: the checkpoint stays
    assert generation.next_flush(5.0) == start + 8.0
    assert generation.due(start + 8.0, 5.0) and not generation.due(start + 7.9, 5.0)
