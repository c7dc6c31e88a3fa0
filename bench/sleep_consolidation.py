"""Sleep consolidation on a scripted 200-turn history: file size before/after each
consolidation, upstream calls and tokens per consolidation, and that nothing was lost.

The app runs in this process (worker driven step by step); the Claude fake runs in its own
process (bench/sleep_fake.py), reached by the real SDK over HTTP. Twenty sessions of ten turns,
each user turn telling one fact from a pool of 70 (so facts repeat), six simulated hours apart;
after every session an update runs, then the sleep schedule (default 5 sessions / 24 h, budget
12,000 characters) decides whether to consolidate. The fake model is scripted, so the sizes
measure the mechanics (what is sent, what is kept, what is archived), not a model's judgement.

    .venv/bin/python bench/sleep_consolidation.py [--budget 12000] [--turns 200]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from src.app import create_app  # noqa: E402
from src.utils import provider  # noqa: E402
from src.utils.storage.messages import add_message  # noqa: E402
from src.utils.storage.personas import create_persona  # noqa: E402
from src.utils.storage.sessions import create_session  # noqa: E402

PID = "benchsleep01"
PIN = "<!-- pin -->\n- Jonas is allergic to peanuts.\n<!-- /pin -->\n"
SEED = f"# Memories\n\n{PIN}\n## Facts\n\n## Shared moments\n"
TOPICS = ["tea", "chess", "Bremen", "his sister Lea", "rainy Sundays", "old maps", "the harbour",
          "jazz records", "his bicycle", "cooking risotto"]


def _fact(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"he cares about {topic} (remark {i % 70:02d}) and mentioned it at length again"


def run(budget: int, turns: int) -> dict:
    fake = subprocess.Popen([sys.executable, str(ROOT / "bench" / "sleep_fake.py")], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = fake.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as data:
        app = create_app({"DATA_DIR": data, "ANTHROPIC_API_KEY": "sk-bench-sleep-0000",
                          "ANTHROPIC_BASE_URL": url, "ANTHROPIC_MAX_RETRIES": 0,
                          "CORTEX_WORKER": False, "CORTEX_BUDGET": budget,
                          "PERSONA_LOG_LEVEL": "WARNING", "LOG_LEVEL": "WARNING"})
        try:
            report = _drive(app, budget, turns)
        finally:
            provider.shutdown_services(app)
            fake.stdin.close()
            log = json.loads(fake.stdout.readline() or "[]")
            fake.wait(timeout=30)
            fake.stdout.close()
    report["upstream"] = _calls_per_consolidation(log)
    return report


def _drive(app, budget: int, turns: int) -> dict:
    db, cortex = provider.get_db(app), provider.get_cortex_service(app)
    trigger, worker = provider.get_cortex_trigger(app), provider.get_cortex_worker(app)
    sleep = provider.get_sleep_schedule(app)
    conn = db.conn()
    create_persona(conn, PID, {"name": "Mira", "user_name": "Jonas", "language": "en"})
    cortex.write_file(PID, "memory.md", SEED)
    start, told, consolidations = time.time(), [], []
    for session in range(turns // 10):
        sid = f"sleepbench{session:06d}"
        create_session(conn, sid, PID, f"Session {session}")
        for turn in range(10):
            i = session * 10 + turn
            told.append(_fact(i))
            add_message(conn, sid, "user", f"FACT: {_fact(i)}. Anyway, how are you?")
            add_message(conn, sid, "assistant", "Tell me more!")
        trigger.request_update(PID)
        worker.run_pending()
        before = cortex.read_file_info(PID, "memory.md").chars
        queued = sleep.scan(now=start + (session + 1) * 6 * 3600)
        for job in worker.run_pending():
            if job.id in queued:
                after = cortex.read_file_info(PID, "memory.md").chars
                consolidations.append({"after_session": session + 1, "trigger": job.trigger,
                                       "status": job.status, "before": before,
                                       "after": after, "usage": job.usage or {}})
    final = cortex.read_file_info(PID, "memory.md").content
    archived = "".join(e["text"] for e in conn.execute(
        "SELECT text FROM cortex_archive WHERE persona_id = ?", (PID,)))
    lost = [f for f in dict.fromkeys(told) if f not in final and f not in archived]
    return {"budget": budget, "turns": turns, "consolidations": consolidations,
            "final_chars": len(final), "archive_chars": len(archived),
            "told_chars": sum(len(f) + 30 for f in told), "pin_kept": PIN in final,
            "facts_lost": len(lost)}


def _calls_per_consolidation(log: list[dict]) -> list[dict]:
    """Consecutive consolidation requests form one consolidation run."""
    runs, current = [], None
    for entry in log:
        if entry["kind"] == "consolidate":
            if current is None:
                current = {"calls": 0, "input_chars": 0}
                runs.append(current)
            current["calls"] += 1
            current["input_chars"] += entry["input_chars"]
        elif entry["kind"] == "update":
            current = None
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=12_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    report = run(args.budget, args.turns)
    print(f"budget {report['budget']:,} chars, {report['turns']} turns")
    print("#  after  trigger    status  memory.md before → after   calls  prompt tok "
          "(cached)  out tok")
    for n, (c, up) in enumerate(zip(report["consolidations"], report["upstream"], strict=False), 1):
        usage = c["usage"]
        cached = usage.get("cache_read_input_tokens", 0) or 0
        prompt = (usage.get("input_tokens", 0) or 0) + cached + \
            (usage.get("cache_creation_input_tokens", 0) or 0)
        print(f"{n:<2} s{c['after_session']:<5} {c['trigger']:<10} {c['status']:<7} "
              f"{c['before']:>8,} → {c['after']:>7,}        {up['calls']:>3}  {prompt:>10,} "
              f"({cached:>6,})  {usage.get('output_tokens', 0):>7,}")
    print(f"final memory.md {report['final_chars']:,} chars; archive {report['archive_chars']:,} "
          f"chars; pinned block kept: {report['pin_kept']}; facts neither in memory nor "
          f"archive: {report['facts_lost']}")
    return 0 if report["pin_kept"] and report["facts_lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
