"""What one cortex update costs upstream: our flow against the seed's flow.

Ours (CortexUpdateService): the three files are preloaded in the prompt with their meters and the
model edits them with `str_replace` / `insert`. The seed's flow (seed 004 §5): the model first
reads each file with `read_file`, then rewrites every file it changes whole with `write_file`.
Both are driven by the same scripted fake model making the same logical change (one new fact
under a heading of memory.md, one new line at the end of relationship.md), over the same 30
messages, through the real `ApiClient.tool_request`, SDK and FakeClaude. Each of the three files
is filled to the given size. Measured per update: bytes of the request bodies sent upstream,
API round trips, characters the model had to output (text plus tool-input JSON), and input
tokens as the fake accounts them (characters / 4; "input tokens" are those not read from the
prompt cache, which the fake simulates like the API: our flow marks its prompt for caching).

    .venv/bin/python bench/cortex_update_bytes.py [--sizes 1 8 32] [--messages 30]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from src.app import create_app
from src.utils import provider
from src.utils.api_request import RequestConfig
from src.utils.api_request.types import ToolDefinition
from src.utils.storage.messages import add_message
from src.utils.storage.personas import create_persona
from src.utils.storage.sessions import create_session
from tests.fakes.claude import FakeClaude, replies

HEADING = "## Important details about Jonas\n"
FACT = "- Jonas adopted a grey cat called Pixel on 2025-06-03; she sleeps on his keyboard.\n"
BOND = "- 2025-06-03: Jonas trusted me with how nervous he is about his new job.\n"
SUMMARY = "I noted Pixel the cat and that Jonas confided his nerves about the new job."
SEED_SYSTEM = (  # seed 004 §5.3, verbatim apart from the tool names of seed 000
    "Du bist {char}. Du hast gerade eine Konversation mit {user} geführt.\n\nDeine Aufgabe: "
    "Aktualisiere deine persönlichen Cortex-Dateien basierend auf dem Gesprächsverlauf.\n\nDu "
    "hast drei Dateien:\n- memory.md — Erinnerungen: Fakten, Erlebnisse, Details über {user}\n"
    "- soul.md — Seelen-Entwicklung: Deine innere Reifung, Persönlichkeitsentwicklung\n"
    "- relationship.md — Beziehungsdynamik: Wie sich eure Beziehung entwickelt\n\nRegeln:\n"
    "1. Lies zuerst die Dateien die du aktualisieren möchtest (read_file)\n2. Schreibe nur "
    "Dateien, bei denen sich etwas Relevantes geändert hat (write_file)\n3. Schreibe immer die "
    "VOLLSTÄNDIGE Datei, nicht nur die Änderungen\n4. Behalte die bestehende Markdown-Struktur "
    "bei\n5. Schreibe in Ich-Perspektive, als wärst du {char}\n6. Nicht jedes Gespräch erfordert "
    "Updates in allen drei Dateien — sei selektiv\n7. Wenn nichts Neues zu notieren ist, "
    "aktualisiere die Datei NICHT\n\nGib nach Abschluss aller Tool-Calls eine kurze "
    "Zusammenfassung was du aktualisiert hast.")
_FILE = {"type": "string", "enum": ["memory.md", "soul.md", "relationship.md"]}
SEED_TOOLS = [
    ToolDefinition("read_file", "Liest eine deiner Cortex-Dateien.",
                   {"type": "object", "properties": {"filename": _FILE},
                    "required": ["filename"]}),
    ToolDefinition("write_file", "Schreibt eine Cortex-Datei. Schreibe immer die VOLLSTÄNDIGE "
                   "Datei.", {"type": "object", "properties": {"filename": _FILE,
                                                                "content": {"type": "string"}},
                              "required": ["filename", "content"]}),
]


class ScriptedModel:
    """One model for both flows: it edits when it has edit tools, else reads and rewrites."""

    def __init__(self):
        self.output_chars = 0

    def __call__(self, body: dict):
        turn = len(body["messages"])
        if any(tool["name"] == "str_replace" for tool in body["tools"]):
            return self._ours(body, turn)
        return self._seed(body, turn)

    def _emit(self, calls=None, text=None):
        self.output_chars += len(text or "") + sum(len(json.dumps(args)) for _, args in calls or ())
        return replies.tool_use(calls) if calls else replies.text(text)

    def _ours(self, body, turn):
        if turn > 1:
            return self._emit(text=SUMMARY)
        prompt = "".join(block["text"] for block in body["messages"][0]["content"])
        lines = int(prompt.split('name="relationship.md"', 1)[1].split('lines="', 1)[1]
                    .split('"', 1)[0])
        return self._emit([
            ("str_replace", {"filename": "memory.md", "old_str": HEADING,
                             "new_str": HEADING + FACT}),
            ("insert", {"filename": "relationship.md", "insert_line": lines,
                        "insert_text": BOND.rstrip("\n")})])

    def _seed(self, body, turn):
        if turn == 1:
            return self._emit([("read_file", {"filename": name})
                               for name in ("memory.md", "soul.md", "relationship.md")])
        if turn == 3:
            memory, _, relationship = (
                block["content"] if isinstance(block["content"], str)
                else "".join(part["text"] for part in block["content"])
                for block in body["messages"][-1]["content"])
            return self._emit([
                ("write_file", {"filename": "memory.md",
                                "content": memory.replace(HEADING, HEADING + FACT, 1)}),
                ("write_file", {"filename": "relationship.md", "content": relationship + BOND})])
        return self._emit(text=SUMMARY)


def seed_flow(env: dict, pid: str, history: list[dict]):
    """Seed 004's execute_cortex_update, on our ApiClient (read each file, then rewrite it)."""
    cortex = env["cortex"]

    def executor(name: str, args: dict):
        if name == "read_file":
            return True, cortex.read_file(pid, args["filename"]) or "(Datei ist leer)"
        cortex.write_file(pid, args["filename"], args["content"], author="ai")
        return True, f"Datei {args['filename']} erfolgreich aktualisiert ({len(args['content'])} Zeichen)"

    text = "\n\n".join(f"{'User' if m['role'] == 'user' else 'Mira'}: {m['content']}"
                       for m in history)
    config = RequestConfig(
        system_prompt=SEED_SYSTEM.format(char="Mira", user="Jonas"),
        messages=[{"role": "user", "content": f"Hier ist der bisherige Gesprächsverlauf:\n\n"
                   f"{text}\n\nBitte aktualisiere deine Cortex-Dateien basierend auf diesem "
                   "Gespräch."}],
        max_tokens=4096, tools=SEED_TOOLS, request_type="cortex_update")
    return env["api"].tool_request(config, executor)


def our_flow(env: dict, pid: str, history: list[dict]):
    """CortexUpdateService.run, exactly as the worker calls it."""
    return env["update"].run(pid)


def filled(title: str, size: int) -> str:
    """A Markdown cortex file of exactly `size` characters with a few headings."""
    text = f"# {title}\n\n{HEADING}"
    i = 0
    while len(text) < size:
        if i % 12 == 11:
            text += f"\n## Section {i // 12}\n"
        text += f"- Note {i}: something Jonas once told me about his week, kept for later.\n"
        i += 1
    return text[:size - 1] + "\n"


def measure(env, fake, model, flow, pid: str, size: int, history) -> dict:
    cortex = env["cortex"]
    for name, title in (("memory.md", "Memories"), ("soul.md", "Soul"),
                        ("relationship.md", "Relationship")):
        cortex.write_file(pid, name, filled(title, size), author="user")
    start, model.output_chars = len(fake.requests), 0
    result = flow(env, pid, history)
    ok = result["success"] if isinstance(result, dict) else result.success
    if not ok:
        raise RuntimeError(f"{flow.__name__} failed: {result}")
    memory, bond = cortex.read_file(pid, "memory.md"), cortex.read_file(pid, "relationship.md")
    assert FACT in memory and memory.count(FACT) == 1 and bond.endswith(BOND), flow.__name__
    sent = fake.requests[start:]
    usage = (result.get("usage") if isinstance(result, dict) else result.usage) or {}
    return {"round_trips": len(sent),
            "bytes": sum(int(r.headers.get("content-length") or len(json.dumps(r.body)))
                         for r in sent),
            "input_tokens": usage.get("input_tokens", 0)
            + usage.get("cache_creation_input_tokens", 0),
            "cache_read": usage.get("cache_read_input_tokens", 0),
            "output_chars": model.output_chars}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32], help="KiB per file")
    parser.add_argument("--messages", type=int, default=30)
    args = parser.parse_args()
    model = ScriptedModel()
    with FakeClaude() as fake, tempfile.TemporaryDirectory() as data_dir:
        fake.default = replies.scripted(model)
        app = create_app({"DATA_DIR": data_dir, "ANTHROPIC_API_KEY": "sk-ant-bench-000000000000",
                          "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_MAX_RETRIES": 0,
                          "ANTHROPIC_TIMEOUT": 30.0, "CORTEX_WORKER": False,
                          "LOG_LEVEL": "WARNING"})
        env = {"cortex": provider.get_cortex_service(app), "update": provider.get_update_service(app),
               "api": provider.get_api_client(app)}
        conn = provider.get_db(app).conn()
        rows = []
        for size in args.sizes:
            for flow in (our_flow, seed_flow):
                label = "ours" if flow is our_flow else "seed"
                pid = f"bench{size:03d}{label}"
                create_persona(conn, pid, {"name": "Mira", "user_name": "Jonas"})
                create_session(conn, f"sess{pid}", pid)
                history = [add_message(conn, f"sess{pid}", "user" if i % 2 == 0 else "assistant",
                                       f"Message {i}: the cat, the new job and the weekend plans "
                                       "came up again, with a few more details than last time.")
                           for i in range(args.messages)]
                rows.append((size, label,
                             measure(env, fake, model, flow, pid, size * 1024, history)))
        env["api"].close()
    print(f"{'KiB/file':>8}  {'flow':<5} {'round trips':>11} {'bytes sent':>11} "
          f"{'input tokens':>12} {'cache reads':>11} {'output chars':>12}")
    for size, flow, m in rows:
        print(f"{size:>8}  {flow:<5} {m['round_trips']:>11} {m['bytes']:>11,} "
              f"{m['input_tokens']:>12,} {m['cache_read']:>11,} {m['output_chars']:>12,}")
    for size in args.sizes:
        ours, seed = (m for s, _, m in rows if s == size)
        print(f"{size:>3} KiB: ours sends {ours['bytes'] / seed['bytes']:.0%} of the seed's bytes, "
              f"{ours['input_tokens'] / seed['input_tokens']:.0%} of its uncached input tokens, "
              f"and outputs {ours['output_chars'] / seed['output_chars']:.1%} of its characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
