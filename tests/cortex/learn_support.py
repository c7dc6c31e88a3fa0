"""Helpers for the "learn from an imported history" tests: import SillyTavern's chat over REST
(tests/portability/files/sillytavern_chat.jsonl: five messages on the active branch, one reply
with three swipes) and read the rows a learn run touches."""
from tests.fakes.claude import replies
from tests.portability.support import ST_CHAT, upload


def import_chat(client, pid: str, data: bytes = ST_CHAT) -> dict:
    """Imports the chat into persona `pid`; the new session."""
    response = upload(client, data, f"/api/personas/{pid}/chats/import", filename="chat.jsonl")
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def window_replies(*lines: str, filename: str = "memory.md") -> list:
    """One update run per line: append the line to the end of `filename`, then a summary."""
    scripted = []
    for number, line in enumerate(lines, 1):
        scripted += [replies.tool_use([("insert", {"filename": filename, "insert_line": 0,
                                                   "insert_text": line})]),
                     replies.text(f"Window {number}.")]
    return scripted


def cortex_state(env, pid: str) -> dict:
    """Everything a learn run could change: the files on disk, revisions, their anchors,
    proposals, pending groups and the processed mark."""
    conn = env.conn
    rows = {table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
            for table in ("cortex_revisions", "cortex_revision_sources", "cortex_proposals",
                          "cortex_changesets", "cortex_state")}
    files = {}
    for name in ("memory.md", "soul.md", "relationship.md"):
        with open(env.cortex.paths.file(pid, name), "rb") as handle:
            files[name] = handle.read()
    return {"rows": rows, "files": files}


def first_rounds(requests) -> list:
    """The requests that opened an update run (one user turn: the prompt)."""
    return [r for r in requests if len(r.messages) == 1]
