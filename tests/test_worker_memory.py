"""The worker's heap knobs: the idle trim runs once after a busy spell, and never while busy;
it wakes only when the last reply ends (`idle`), and trims only a heap that grew."""
import gc
import threading

from src import worker_memory
from src.worker_memory import IdleTrim

DEADLINE = 10.0


def test_the_heap_is_trimmed_once_after_a_busy_spell_ends():
    state = {"busy": True}
    looked = threading.Event()

    def busy() -> bool:
        looked.set()
        return state["busy"]

    trimmer = IdleTrim(busy, idle_seconds=0.0, growth=0)
    trimmer.start()
    try:
        trimmer.poke()  # a reply starts
        trimmer.idle()  # an end heard while another reply still streams
        assert looked.wait(DEADLINE)
        assert trimmer.trims == 0  # nothing while replies stream
        state["busy"] = False
        trimmer.idle()  # the last reply ended
        assert trimmer.trimmed.wait(DEADLINE)
        trimmer.trimmed.clear()
        state["busy"] = True  # a second busy spell
        trimmer.poke()
        state["busy"] = False
        trimmer.idle()
        assert trimmer.trimmed.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert trimmer.trims == 2


def test_between_spells_the_trimmer_looks_only_when_the_last_reply_ends():
    """No look at all while replies stream or nothing runs: a wake is CPU a chat turn pays."""
    looks = []
    trimmer = IdleTrim(lambda: looks.append(1) or False, idle_seconds=0.0, growth=0)
    trimmer.start()
    try:
        for _ in range(3):
            trimmer.poke()
        assert trimmer.trims == 0 and not looks
        trimmer.idle()
        assert trimmer.trimmed.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert len(looks) == 1


def test_a_reply_started_after_an_idle_spell_wakes_the_trimmer(tmp_path):
    """Wired as the worker wires it (`server.Worker._tune_memory`): the hub's replies poke it."""
    from src.utils.services import chat_events as events
    from src.utils.services.generations import Generation, GenerationHub
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    hub = GenerationHub(db)
    trimmer = IdleTrim(hub.busy, idle_seconds=0.0, growth=0)
    hub.on_start(trimmer.poke)
    hub.on_idle(trimmer.idle)
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


def test_the_hub_says_idle_when_its_last_reply_ends_not_before(tmp_path):
    from src.utils.services import chat_events as events
    from src.utils.services.generations import Generation, GenerationHub
    from src.utils.storage import Database
    db = Database(str(tmp_path / "app.db"))
    hub = GenerationHub(db)
    idle = threading.Event()
    hub.on_idle(idle.set)
    gates = {2: threading.Event(), 4: threading.Event()}
    ended = {2: threading.Event(), 4: threading.Event()}

    def work(generation: Generation) -> None:
        gates[generation.reply_id].wait(DEADLINE)
        generation.finish(events.done(generation.reply_id, "", {}, "end_turn", {}))
        ended[generation.reply_id].set()
    try:
        hub.launch(Generation("s", 1, 2), work)
        hub.launch(Generation("t", 3, 4), work)
        gates[2].set()
        assert ended[2].wait(DEADLINE)
        _until(lambda: hub.local(2) is None)  # its thread has left the hub
        assert hub.busy() and not idle.is_set()
        gates[4].set()
        assert idle.wait(DEADLINE)
        assert not hub.busy()
    finally:
        hub.close()
        db.close()


def _until(condition) -> None:
    """Waits (polling, bounded by DEADLINE) until `condition()` holds."""
    pause = threading.Event()
    for _ in range(int(DEADLINE / 0.005)):
        if condition():
            return
        pause.wait(0.005)
    raise AssertionError("condition not reached")


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
    released = threading.Event()
    trimmer = IdleTrim(lambda: False, idle_seconds=0.0, release=released.set, growth=0)
    trimmer.start()
    try:
        trimmer.poke()
        assert not released.is_set()
        trimmer.idle()
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


def test_a_spell_that_left_the_heap_as_it_was_is_not_trimmed():
    """A trim (the caches released, a full collection, malloc_trim) cost a worker 1-2 ms after
    one person's turn and gave nothing back: a heap that did not grow is left alone."""
    released = threading.Event()
    trimmer = IdleTrim(lambda: False, idle_seconds=0.0, release=released.set, growth=64 << 20)
    trimmer.start()
    try:
        trimmer.poke()
        trimmer.idle()
        assert trimmer.decided.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert (trimmer.trims, trimmer.skips) == (0, 1)
    assert not released.is_set()


def test_a_spell_that_grew_the_heap_is_trimmed_and_the_next_counts_from_that_trim():
    trimmer = IdleTrim(lambda: False, idle_seconds=0.0, growth=4 << 20)
    trimmer.start()
    kept = []
    try:
        kept = [bytearray(1024) for _ in range(16 * 1024)]  # 16 MiB of heap, touched
        trimmer.poke()
        trimmer.idle()
        assert trimmer.decided.wait(DEADLINE)
        assert (trimmer.trims, trimmer.skips) == (1, 0)
        trimmer.decided.clear()
        trimmer.poke()  # a second spell: the heap still holds what it held at the trim
        trimmer.idle()
        assert trimmer.decided.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert (trimmer.trims, trimmer.skips) == (1, 1)
    assert len(kept) == 16 * 1024


def test_the_resident_heap_is_read_from_proc():
    before = worker_memory.resident_heap()
    kept = bytearray(32 << 20)  # zero-filled: every page touched
    after = worker_memory.resident_heap()
    assert before is not None and after is not None
    assert after - before >= 16 << 20
    assert len(kept) == 32 << 20
