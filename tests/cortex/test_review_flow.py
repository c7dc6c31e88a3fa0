"""Review mode end to end: HTTP Claude fake, real SDK, a real server, a restart in between."""
import threading

from src.utils import provider
from tests.chat.chat_support import Script, SseStream
from tests.cortex.review_support import MEMORY, accept, insert_reply, proposals, review_on
from tests.cortex.update_support import PID, Env, second_app, system_text
from tests.support.live_server import LiveServer

CAT = "- Jonas has a cat called Miso."


def _chat(app, script, session_id: str, text: str) -> str:
    """One chat turn over SSE against `app` served for real; returns the system prompt sent."""
    script.reply("Sure.")
    with LiveServer(app) as live, SseStream(live.url, "/api/chat/stream",
                                            {"session_id": session_id, "message": text}) as sse:
        assert sse.status == 200
        events = []
        while (event := sse.next_event()) is not None:
            events.append(event)
    assert events[-1][0] == "done", events
    chats = [r for r in script_requests(script) if r.stream and not r.tools]
    return system_text(chats[-1])


def script_requests(script):
    return script.claude.requests


def test_a_proposal_survives_a_restart_and_the_chat_sees_accepted_text_only(app_config, claude):
    script = Script(claude)
    script.claude = claude
    first = Env(second_app(app_config))
    try:
        first.persona()
        first.write("memory.md", MEMORY)
        with first.app.test_client() as client:
            review_on(client)
            session = client.post("/api/sessions", json={"persona_id": PID}).get_json()["id"]
        first.say(session, "I adopted a cat called Miso.", "How lovely!")
        script.update(*insert_reply(CAT, 4, summary="Cat."))
        job = first.run_job()
        proposal_id = job.proposal_id
    finally:
        provider.shutdown_services(first.app)

    again = Env(second_app(app_config))
    try:
        with again.app.test_client() as client:
            listed = proposals(client)
            assert listed["pending"] == 1 and listed["proposals"][0]["id"] == proposal_id
            system = _chat(again.app, script, session, "What do you remember?")
            assert "Jonas lives in Bremen." in system and "Miso" not in system
            assert again.read("memory.md") == MEMORY
            assert accept(client, proposal_id).status_code == 200
        system = _chat(again.app, script, session, "And now?")
        assert CAT in system
    finally:
        provider.shutdown_services(again.app)


def test_two_reviewers_accepting_at_once_apply_the_proposal_once(client, env, claude):
    env.persona()
    env.write("memory.md", MEMORY)
    review_on(client)
    env.say(env.session(), "I adopted a cat called Miso.", "How lovely!")
    claude.enqueue(*insert_reply(CAT, 4))
    proposal_id = env.run_job().proposal_id
    start, results = threading.Barrier(2), []

    def reviewer():
        with env.app.test_client() as own:
            start.wait(timeout=10)
            results.append(accept(own, proposal_id).status_code)

    threads = [threading.Thread(target=reviewer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == [200, 409]
    assert env.read("memory.md").count(CAT) == 1
    assert len([r for r in env.revisions(filename="memory.md") if r["author"] == "ai"]) == 1
