"""The worker's heap knobs: the idle trim runs once after a busy spell, and never while busy;
between spells it sleeps until a reply starts (`poke`)."""
import gc
import threading

from src import worker_memory
from src.worker_memory import IdleTrim

DEADLINE = 10.0


def test_the_heap_is_trimmed_once_after_a_busy_spell_ends():
    state = {"busy": True}
    seen_busy = threading.Event()

    def busy() -> bool:
        if state["busy"]:
            seen_busy.set()
        return state["busy"]

    trimmer = IdleTrim(busy, idle_seconds=0.0, check_seconds=0.01)
    trimmer.start()
    try:
        trimmer.poke()  # a reply starts
        assert seen_busy.wait(DEADLINE)
        assert trimmer.trims == 0  # nothing while replies stream
        state["busy"] = False
        assert trimmer.trimmed.wait(DEADLINE)
        seen_busy.clear()
        state["busy"] = True  # a second busy spell, after the trimmer went back to sleep
        trimmer.poke()  # its start wakes the trimmer
        assert seen_busy.wait(DEADLINE)
        trimmer.trimmed.clear()
        state["busy"] = False
        assert trimmer.trimmed.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert trimmer.trims == 2


def test_a_reply_started_after_an_idle_spell_wakes_the_trimmer(tmp_path):
    """Wired as the worker wires it (`server.Worker._tune_memory`): the hub's replies poke it."""
    from src.utils.services import chat_events as events
    from src.utils.services.generations import Generation, GenerationHub
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    hub = GenerationHub(db)
    trimmer = IdleTrim(hub.busy, idle_seconds=0.0, check_seconds=0.01)
    hub.on_start(trimmer.poke)
    trimmer.start()
    gate = threading.Event()

    def work(generation: Generation) -> None:
        gate.wait(DEADLINE)
        generation.finish(events.done(2, "", {}, "end_turn", {}))
    try:
        hub.launch(Generation("s", 1, 2), work)
        gate.set()
        assert trimmer.trimmed.wait(DEADLINE)
        assert not hub.busy()
    finally:
        trimmer.stop()
        hub.close()
        db.close()


def test_settling_the_heap_freezes_the_boot_and_raises_the_generation_0_threshold():
    before = gc.get_threshold()
    try:
        worker_memory.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == worker_memory.GEN0_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    worker_memory.limit_arenas()  # glibc or not: never raises
    assert worker_memory.trim() in (True, False)


def test_after_a_busy_spell_the_app_releases_its_caches_before_the_trim():
    state = {"busy": True}
    seen_busy, released = threading.Event(), threading.Event()

    def busy() -> bool:
        if state["busy"]:
            seen_busy.set()
        return state["busy"]

    trimmer = IdleTrim(busy, idle_seconds=0.0, check_seconds=0.01, release=released.set)
    trimmer.start()
    try:
        trimmer.poke()
        assert seen_busy.wait(DEADLINE)
        assert not released.is_set()
        state["busy"] = False
        assert trimmer.trimmed.wait(DEADLINE)
        assert released.is_set()
    finally:
        trimmer.stop()


def test_idle_connections_give_back_their_page_cache(tmp_path):
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    try:
        conn = db.conn()
        conn.execute("CREATE TABLE filler (x TEXT)")
        conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 1000,)] * 2000)
        conn.execute("SELECT COUNT(*), MAX(x) FROM filler").fetchone()
        db.close_thread()  # now idle in the pool, its cache full of the table's pages
        db.shrink_idle()
        assert db.conn() is conn  # still pooled, still usable
        assert conn.execute("SELECT COUNT(*) FROM filler").fetchone()[0] == 2000
    finally:
        db.close()


def test_the_pool_counts_connections_in_use_and_says_when_it_is_crowded(tmp_path):
    """A reply keeps its connection while it streams unless more than `HELD` are in use
    (`Database.crowded`), so 200 streams do not hold 200 page caches."""
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    holding = threading.Barrier(db.HELD + 2)  # HELD + 1 holders and this thread
    done = threading.Event()
    answers: list[bool] = []

    def hold() -> None:
        db.conn()
        holding.wait(DEADLINE)
        done.wait(DEADLINE)
        db.close_thread()

    threads = [threading.Thread(target=hold) for _ in range(db.HELD + 1)]
    try:
        assert not db.crowded()
        for thread in threads:
            thread.start()
        holding.wait(DEADLINE)
        answers.append(db.crowded())
    finally:
        done.set()
        for thread in threads:
            thread.join(DEADLINE)
    answers.append(db.crowded())
    db.close()
    assert answers == [True, False]


def _burst(db, n: int) -> list:
    """The connections `n` threads used at once (each holds its own until all have one)."""
    holding = threading.Barrier(n + 1)
    seen: list = []
    lock = threading.Lock()

    def hold() -> None:
        conn = db.conn()
        with lock:
            seen.append(conn)
        holding.wait(DEADLINE)
        holding.wait(DEADLINE)
        db.close_thread()

    threads = [threading.Thread(target=hold) for _ in range(n)]
    for thread in threads:
        thread.start()
    holding.wait(DEADLINE)
    holding.wait(DEADLINE)
    for thread in threads:
        thread.join(DEADLINE)
    return seen


def test_a_burst_above_the_held_connections_finds_them_all_pooled_the_next_time(tmp_path):
    """A burst has more connections in use than its replies may hold while streaming (frames,
    prompts, final writes); the next burst takes the same ones back instead of opening (and
    compiling every statement of a turn on) new ones."""
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    try:
        first, second = _burst(db, db.HELD + 8), _burst(db, db.HELD + 8)
        assert {id(conn) for conn in second} == {id(conn) for conn in first}
    finally:
        db.close()
