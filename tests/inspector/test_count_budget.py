"""Counting has a time budget: a provider that answers count_tokens too slowly is not waited
for; the inspector answers with the labelled estimate (COUNT_BUDGET_SECONDS, default 8 s)."""
import pytest

from tests.world.support import Conversation


@pytest.fixture
def app_config(app_config):
    return {**app_config, "COUNT_BUDGET_SECONDS": 0.5}


def test_a_slow_count_is_not_waited_for(server, client, claude, script):
    persona = client.post("/api/personas", json={"name": "Mira"}).get_json()
    talk = Conversation(server, client, claude, persona)
    try:
        done = talk.say("Hello there")
    finally:
        talk.close()
    claude.count_delay = 3.0  # beyond the budget, within the 5 s a single call may take
    response = client.get(f"/api/sessions/{talk.session['id']}/messages/{done['message_id']}"
                          "/prompt")
    assert response.status_code == 200
    prompt = response.get_json()
    assert {s["counted_by"] for s in prompt["sections"]} == {"estimate"}
    assert prompt["total"]["counted_by"] == "estimate"
    counted = [r for r in claude.requests if r.path == "/v1/messages/count_tokens"]
    # The budget ran out on the first (or, on a machine slow enough to spend it before, none
    # was sent): nothing more was asked.
    assert len(counted) <= 1
