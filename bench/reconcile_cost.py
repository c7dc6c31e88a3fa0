"""What reconciling memory costs upstream, per retraction: a scripted 50-turn conversation (five
sessions of ten turns, an update after each) with five retractions of processed messages, done
the way a person does them (through the app's chat and session services):

1. session 1's first message edited (its whole branch leaves; the update on top came only from it)
2. session 2's last exchange deleted (the update also learned from the rest of the session)
3. session 3 deleted after the person edited memory.md (a person's edit on top)
4. session 4 deleted (its update is still on top)
5. session 5's last reply regenerated (the update also learned from the rest)

Printed per retraction: the path the reconciliation took (direct revert or model run), the
upstream calls and the input/output tokens it spent (the fake counts characters / 4: input as
sent, before any prompt-cache discount; output as the tool inputs and text the model wrote),
and whether every retracted fact left memory.md while the person's line stayed. The direct path must need zero upstream calls (the run fails otherwise). The app runs in
this process (the cortex worker driven step by step); the Claude fake runs in its own process
(bench/reconcile_fake.py), reached by the real SDK over HTTP.

    .venv/bin/python bench/reconcile_cost.py
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from src.app import create_app  # noqa: E402
from src.utils import provider  # noqa: E402
from src.utils.storage.messages import add_message  # noqa: E402
from src.utils.storage.personas import create_persona  # noqa: E402
from src.utils.storage.sessions import create_session  # noqa: E402

PID = "benchreconcile1"
SEED = "# Memories\n\n## Facts\n\n## Notes\n"
PERSON = "- (written by Jonas) I prefer being called Jo.\n"


def run() -> list[dict]:
    with tempfile.TemporaryDirectory() as data:
        log_path = Path(data) / "fake.jsonl"
        fake = subprocess.Popen([sys.executable, str(ROOT / "bench" / "reconcile_fake.py"),
                                 str(log_path)], cwd=ROOT, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        url = fake.stdout.readline().strip()
        app = create_app({"DATA_DIR": str(Path(data) / "app"), "ANTHROPIC_API_KEY":
                          "sk-bench-reconcile-0000", "ANTHROPIC_BASE_URL": url,
                          "ANTHROPIC_MAX_RETRIES": 0, "CORTEX_WORKER": False,
                          "LOG_LEVEL": "WARNING"})
        try:
            return Bench(app, log_path).drive()
        finally:
            provider.shutdown_services(app)
            fake.stdin.close()
            fake.wait(timeout=30)
            fake.stdout.close()


class Bench:
    """The scripted conversation and its five retractions."""

    def __init__(self, app, log_path: Path):
        self.db, self.cortex = provider.get_db(app), provider.get_cortex_service(app)
        self.trigger, self.worker = provider.get_cortex_trigger(app), provider.get_cortex_worker(app)
        self.chat, self.sessions = provider.get_chat_service(app), provider.get_session_service(app)
        self.log_path = log_path
        self.sids: list[str] = []

    def drive(self) -> list[dict]:
        conn = self.db.conn()
        create_persona(conn, PID, {"name": "Mira", "user_name": "Jonas", "language": "en"})
        self.cortex.write_file(PID, "memory.md", SEED)
        results = []
        for number in range(5):
            sid = f"reconbench{number:06d}"
            create_session(conn, sid, PID, f"Session {number + 1}")
            self.sids.append(sid)
            for turn in range(10):
                add_message(conn, sid, "user", f"FACT: fact {number}.{turn} is true. And you?")
                add_message(conn, sid, "assistant", "Tell me more!")
            self.trigger.request_update(PID)
            self.worker.run_pending()
            results.append(self.retract(number))
        return results

    def retract(self, number: int) -> dict:
        sid = self.sids[number]
        branch = self.sessions.get(sid, limit=200)["messages"]
        if number == 0:
            label = "edit first message"
            self.chat.edit_message(branch[0]["id"], "FACT: fact 0.0 was a typo. And you?")
        elif number == 1:
            label = "delete last exchange"
            self.chat.delete_last(sid)
        elif number == 2:
            label = "delete session (person's edit on top)"
            self.cortex.write_file(PID, "memory.md",
                                   self.cortex.read_file(PID, "memory.md") + PERSON)
            self.sessions.delete(sid)
        elif number == 3:
            label = "delete session"
            self.sessions.delete(sid)
        else:
            label = "regenerate last reply"
            generation = self.chat.start_regenerate(sid, branch[-1]["id"])
            list(self.chat.follow(generation))
        retracted = self._retracted_facts(number)
        seen = self._log_length()
        self.worker.run_pending()
        calls = [entry for entry in self._log()[seen:] if entry["kind"] == "reconcile"]
        memory = self.cortex.read_file(PID, "memory.md")
        revision = self.cortex.history(PID, "memory.md")
        path = "direct" if any(r["reverts"] for r in revision[:2]) and not calls else (
            "model" if calls else "none")
        return {"retraction": label, "path": path, "upstream_calls": len(calls),
                "input_tokens": sum(c["input_tokens"] for c in calls),
                "output_tokens": sum(c["output_tokens"] for c in calls),
                "facts_gone": not any(f"- {fact}\n" in memory for fact in retracted),
                "person_kept": number < 2 or PERSON in memory}

    @staticmethod
    def _retracted_facts(number: int) -> list[str]:
        if number in (0, 2, 3):
            return [f"fact {number}.{turn} is true" for turn in range(10)]
        if number == 1:
            return [f"fact {number}.9 is true"]
        return []

    def _log(self) -> list[dict]:
        with open(self.log_path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def _log_length(self) -> int:
        return len(self._log()) if self.log_path.exists() else 0


def main() -> int:
    results = run()
    print(f"{'retraction':<40} {'path':<7} {'calls':>5} {'in tok':>7} {'out tok':>7}  ok")
    for row in results:
        ok = row["facts_gone"] and row["person_kept"]
        print(f"{row['retraction']:<40} {row['path']:<7} {row['upstream_calls']:>5} "
              f"{row['input_tokens']:>7} {row['output_tokens']:>7}  {'yes' if ok else 'NO'}")
    for path in ("direct", "model"):
        rows = [r for r in results if r["path"] == path]
        if rows:
            print(f"{path:>6}: {len(rows)} retraction(s), "
                  f"{sum(r['upstream_calls'] for r in rows) / len(rows):.1f} calls and "
                  f"{sum(r['input_tokens'] + r['output_tokens'] for r in rows) / len(rows):.0f} "
                  "tokens per retraction")
    direct_calls = sum(r["upstream_calls"] for r in results if r["path"] == "direct")
    if direct_calls or not all(r["facts_gone"] and r["person_kept"] for r in results):
        print("FAILED: the direct path made upstream calls, or a fact or edit was wrong")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
