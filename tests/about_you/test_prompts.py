"""What the person's user persona puts into the requests the fakes receive (docs/about-you.md):
its name as `{{user}}` and its description, in the chat request (a second cached system block
after the unchanged persona+cortex prefix) and in the cortex update request; a per-conversation
choice; deleting one sends its conversations back to the default."""
import json

from tests.chat.chat_support import BOTH_PROVIDERS, Script, chat_requests
from tests.memory.support import add_line
from tests.world.support import Conversation as Talk

ALEX = "Alex is a marine biologist who hates mornings."
SAM = "Sam restores old sailing boats in Kiel."


def _user_persona(convo, name: str, description: str = "", **extra) -> dict:
    return convo.call("POST", "/api/user-personas",
                      {"name": name, "description": description, **extra}, status=201)


def _persona(convo) -> str:
    """A persona whose card text says {{user}} (no per-persona name of its own)."""
    return convo.call("POST", "/api/personas", {"name": "Mira", "description":
                      "Mira is {{user}}'s neighbour."}, status=201)["id"]


def _system_text(request) -> str:
    system = request.system
    return system if isinstance(system, str) else "\n\n".join(b["text"] for b in system)


@BOTH_PROVIDERS
def test_name_and_description_reach_the_chat_request_in_a_cached_block_of_their_own(
        server, client, claude):
    Script(claude)
    client.post("/api/user-personas", json={"name": "Alex", "description": ALEX})
    persona = client.post("/api/personas", json={"name": "Mira", "description":
                          "Mira is {{user}}'s neighbour."}).get_json()
    talk = Talk(server, client, claude, persona)
    try:
        talk.say("Hello")
        first = talk.request()
        talk.say("How are you?")
        again = talk.request()
    finally:
        talk.close()
    text = _system_text(first)
    assert "You are Mira, in a conversation with Alex." in text
    assert "Mira is Alex's neighbour." in text
    assert "## About Alex\n" in text and f"<user_persona>\n{ALEX}\n</user_persona>" in text
    other = client.post("/api/user-personas", json={
        "name": "Alex", "description": "Another Alex, a night-shift nurse."}).get_json()
    talk = Talk(server, client, claude, persona)
    try:
        client.patch(f"/api/sessions/{talk.session['id']}", json={"user_persona_id": other["id"]})
        talk.say("Hello")
        second = talk.request()
    finally:
        talk.close()
    if isinstance(first.system, list):
        # persona+cortex unchanged and cached; the description a second breakpoint after it
        assert [("cache_control" in b) for b in first.system] == [True, True, False]
        assert [("cache_control" in b) for b in second.system] == [True, True, False]
        assert first.system[0] == second.system[0]
        assert again.system[:2] == first.system[:2]  # the conversation's turns hit both
        assert ALEX not in first.system[0]["text"] and "About Alex" in first.system[1]["text"]
        assert second.system[1] != first.system[1]
    else:
        # one system text: the persona+cortex prefix is its unchanged beginning
        head = first.system.split("\n\n## About Alex\n")[0]
        assert again.system.startswith(head + "\n\n## About Alex\n")
        assert second.system.startswith(head + "\n\n## About Alex\n") and ALEX not in head


def test_without_a_description_the_prompt_keeps_its_single_breakpoint(convo, claude):
    _user_persona(convo, "Alex")
    pid = _persona(convo)
    convo.say(convo.session(pid), "Hello", "Hi!")
    request = chat_requests(claude)[-1]
    assert [("cache_control" in b) for b in request.system] == [True, False]
    assert "in a conversation with Alex" in request.system[0]["text"]
    assert "<user_persona>" not in _system_text(request)


def test_a_conversation_picks_its_own_user_persona_and_falls_back_when_it_is_deleted(convo,
                                                                                     claude):
    alex = _user_persona(convo, "Alex", ALEX)
    sam = _user_persona(convo, "Sam", SAM)
    assert convo.call("GET", "/api/user-personas")["default_id"] == alex["id"]
    pid = _persona(convo)
    first, second = convo.session(pid), convo.session(pid)
    assert convo.call("GET", f"/api/sessions/{first}")["user_persona_id"] == alex["id"]
    changed = convo.call("PATCH", f"/api/sessions/{second}", {"user_persona_id": sam["id"]})
    assert changed["user_persona_id"] == sam["id"]
    convo.say(second, "Ahoy", "Ahoy!")
    assert "with Sam." in _system_text(chat_requests(claude)[-1])
    assert SAM in _system_text(chat_requests(claude)[-1])
    assert "Mira is Sam's neighbour." in _system_text(chat_requests(claude)[-1])  # card {{user}}
    convo.say(first, "Morning", "Coffee?")
    assert "with Alex." in _system_text(chat_requests(claude)[-1])
    assert SAM not in _system_text(chat_requests(claude)[-1])
    convo.call("DELETE", f"/api/user-personas/{sam['id']}")
    assert convo.call("GET", f"/api/sessions/{second}")["user_persona_id"] is None
    convo.say(second, "Still there?", "Yes.")
    text = _system_text(chat_requests(claude)[-1])
    assert "with Alex." in text and ALEX in text and SAM not in text


def test_the_default_can_only_go_last_and_a_new_default_serves_new_sessions(convo):
    alex = _user_persona(convo, "Alex")
    sam = _user_persona(convo, "Sam", is_default=True)
    listed = convo.call("GET", "/api/user-personas")
    assert listed["default_id"] == sam["id"] and listed["user_personas"][0]["name"] == "Sam"
    pid = _persona(convo)
    assert convo.call("GET", f"/api/sessions/{convo.session(pid)}")["user_persona_id"] == \
        sam["id"]
    refused = convo.call("DELETE", f"/api/user-personas/{sam['id']}", status=409)
    assert refused["error"]["code"] == "default_user_persona"
    convo.call("PUT", "/api/user-personas/default", {"id": alex["id"]})
    convo.call("DELETE", f"/api/user-personas/{sam['id']}")
    convo.call("DELETE", f"/api/user-personas/{alex['id']}")
    assert convo.call("GET", "/api/user-personas") == {"user_personas": [], "default_id": None}


def test_the_cortex_update_request_names_the_conversation_s_person_and_describes_them(convo,
                                                                                      claude):
    _user_persona(convo, "Alex", ALEX)
    sam = _user_persona(convo, "Sam", SAM)
    pid = _persona(convo)
    session = convo.session(pid)
    convo.call("PATCH", f"/api/sessions/{session}", {"user_persona_id": sam["id"]})
    convo.say(session, "I fixed the mast today.", "Well done!")
    convo.remember(pid, add_line("- Sam fixed the mast."))
    update = next(r for r in claude.requests if r.tools)
    system = _system_text(update)
    assert system.startswith("You are Mira. You have just been talking with Sam.")
    assert f"<user_persona>\n{SAM}\n</user_persona>" in system and ALEX not in system
    conversation = json.dumps(update.messages)
    assert "Sam: I fixed the mast today." in conversation


def test_the_german_prompts_carry_the_user_persona(convo, claude):
    _user_persona(convo, "Alex", ALEX)
    pid = convo.call("POST", "/api/personas", {"name": "Mira", "language": "de"},
                     status=201)["id"]
    session = convo.session(pid)
    convo.say(session, "Hallo", "Hallo!")
    text = _system_text(chat_requests(claude)[-1])
    assert "## Über Alex\n" in text and f"<user_persona>\n{ALEX}\n</user_persona>" in text
    convo.remember(pid, add_line("- Alex sagt Hallo."))
    update = _system_text(next(r for r in claude.requests if r.tools))
    assert "So beschreibt sich Alex" in update and ALEX in update


def test_the_name_setting_is_the_default_user_persona_s_name(convo, claude):
    convo.call("PUT", "/api/settings", {"user_name": "Robin"})
    pid = _persona(convo)
    convo.say(convo.session(pid), "Hi", "Hello")
    assert "with Robin." in _system_text(chat_requests(claude)[-1])
    alex = _user_persona(convo, "Alex", ALEX)
    assert convo.call("GET", "/api/settings")["user_name"] == "Alex"
    convo.call("PUT", "/api/settings", {"user_name": "Alexandra"})
    assert convo.call("GET", f"/api/user-personas/{alex['id']}")["name"] == "Alexandra"
    refused = convo.call("PUT", "/api/settings", {"user_name": "", "max_tokens": 99}, status=400)
    assert refused["error"]["field"] == "user_name"
    assert convo.call("GET", "/api/settings")["max_tokens"] != 99
    assert convo.call("GET", f"/api/user-personas/{alex['id']}")["name"] == "Alexandra"


def test_a_persona_s_own_name_for_the_person_still_wins_over_the_default_only(convo, claude):
    _user_persona(convo, "Alex", ALEX)
    sam = _user_persona(convo, "Sam", SAM)
    pid = convo.call("POST", "/api/personas", {"name": "Mira", "user_name": "Captain"},
                     status=201)["id"]
    first, second = convo.session(pid), convo.session(pid)
    convo.say(first, "Hi", "Hello")
    text = _system_text(chat_requests(claude)[-1])
    assert "with Captain." in text and ALEX in text
    convo.call("PATCH", f"/api/sessions/{second}", {"user_persona_id": sam["id"]})
    convo.say(second, "Hi", "Hello")
    assert "with Sam." in _system_text(chat_requests(claude)[-1])
