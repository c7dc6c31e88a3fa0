"""Helpers for the review-mode, pin and sleep tests (real app, SQLite, files, SDK, HTTP fake)."""
from tests.cortex.update_support import PID
from tests.fakes.claude import replies

MEMORY = "# Memories\n\n## Facts\n- Jonas lives in Bremen.\n\n## Shared moments\n"


def review_on(client, pid: str = PID, mode: str = "review") -> None:
    """Switches the persona's review mode over REST."""
    response = client.put(f"/api/personas/{pid}/cortex/settings", json={"memory_review": mode})
    assert response.status_code == 200, response.get_json()


def insert_reply(text: str, line: int = 0, filename: str = "memory.md", summary: str = "Noted."):
    """An update run that inserts `text` and then ends with `summary`."""
    return [replies.tool_use([("insert", {"filename": filename, "insert_line": line,
                                          "insert_text": text})]), replies.text(summary)]


def replace_reply(old: str, new: str, filename: str = "memory.md", summary: str = "Changed."):
    """An update run with one str_replace and a summary."""
    return [replies.tool_use([("str_replace", {"filename": filename, "old_str": old,
                                               "new_str": new})]), replies.text(summary)]


def proposals(client, pid: str = PID, **params) -> dict:
    """GET …/proposals as JSON."""
    response = client.get(f"/api/personas/{pid}/cortex/proposals", query_string=params)
    assert response.status_code == 200
    return response.get_json()


def proposal(client, proposal_id: str, pid: str = PID) -> dict:
    """GET …/proposals/<id> as JSON."""
    response = client.get(f"/api/personas/{pid}/cortex/proposals/{proposal_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def accept(client, proposal_id: str, pid: str = PID, body=None, if_match=None):
    """POST …/accept; returns the response."""
    headers = {"If-Match": f'"{if_match}"'} if if_match is not None else {}
    return client.post(f"/api/personas/{pid}/cortex/proposals/{proposal_id}/accept",
                       json=body if body is not None else {}, headers=headers)


def reject(client, proposal_id: str, pid: str = PID, body=None):
    """POST …/reject; returns the response."""
    return client.post(f"/api/personas/{pid}/cortex/proposals/{proposal_id}/reject",
                       json=body if body is not None else {})
