"""World info at chat time, proved by what the HTTP fakes received (docs/world-info.md): entries
a key activates go into the request after the cached prefix and leave it when the key scrolls
out of `scan_depth`; the prefix and its cache breakpoint never move; each rule of the scan
(constant, selective logic, case, whole words, order, position, budget, recursion) behaves as
SillyTavern's does; the reply records what fired."""
import json

import pytest

from tests.chat.chat_support import BOTH_PROVIDERS, live_config
from tests.portability.support import upload
from tests.world.support import Conversation, persona_with_book, split_system


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@pytest.fixture
def chat(server, client, claude, script):
    """`chat(entries, **book)` -> a Conversation with a persona whose book holds `entries`."""
    opened = []

    def start(entries: list[dict], **book) -> Conversation:
        made = persona_with_book(client, entries, **book)
        conversation = Conversation(server, client, claude, made["persona"])
        conversation.book = made["book"]
        opened.append(conversation)
        return conversation

    yield start
    for conversation in opened:
        conversation.close()


@BOTH_PROVIDERS
def test_a_key_brings_its_entry_after_the_cached_prefix_and_out_again(chat):
    talk = chat([{"keys": ["lighthouse"], "content": "The lighthouse is on Gull Rock.",
                  "comment": "Lighthouse"}], scan_depth=2)
    talk.say("Hello there")
    plain = talk.request()
    assert talk.fired() == []
    done = talk.say("Tell me about the lighthouse, please")
    lit = talk.request()
    assert talk.fired() == ["The lighthouse is on Gull Rock."]
    assert split_system(lit)[0] == split_system(plain)[0]
    assert "Gull Rock" not in split_system(lit)[0]
    if isinstance(lit.system, list):
        assert [("cache_control" in b) for b in lit.system] == [True, False, False]
        assert [("cache_control" in b) for b in plain.system] == [True, False]
        assert lit.system[0] == plain.system[0]
    else:
        assert lit.system.startswith(split_system(plain)[0] + "\n\n## World info\n")
    recorded = talk.reply(done["message_id"])["world_info"]
    assert [(r["name"], r["key"], r["position"]) for r in recorded] == \
        [("Lighthouse", "lighthouse", "before_char")]
    assert recorded[0]["content"] == "The lighthouse is on Gull Rock."
    assert recorded[0]["entry_id"] == talk.book["entries"][0]["id"]
    talk.say("And the weather?")  # depth 2: this message and the reply before it
    assert talk.fired() == []
    assert split_system(talk.request())[0] == split_system(plain)[0]
    history = talk.client.get(f"/api/sessions/{talk.session['id']}").get_json()["messages"]
    assert [m.get("world_info") is not None for m in history if m["role"] == "assistant"] == \
        [False, True, False]


def test_a_deeper_scan_depth_keeps_the_entry_longer(chat):
    talk = chat([{"keys": ["lighthouse"], "content": "Gull Rock."}], scan_depth=4)
    talk.say("The lighthouse!")
    talk.say("And then?")
    assert talk.fired() == ["Gull Rock."]
    talk.say("Later.")
    assert talk.fired() == []


def test_constant_entries_are_always_in_and_disabled_ones_never(chat):
    talk = chat([{"content": "Magic is rare.", "constant": True},
                 {"keys": ["hello"], "content": "Greetings are formal.", "enabled": False}])
    done = talk.say("hello")
    assert talk.fired() == ["Magic is rare."]
    assert talk.reply(done["message_id"])["world_info"][0]["key"] is None


@pytest.mark.parametrize(("logic", "message", "fires"), [
    (None, "the dragon sleeps", False),  # plain V2 selective: AND ANY
    (None, "the dragon sleeps in the cave", True),
    ("and_any", "the dragon in the mountain", True),
    ("and_all", "the dragon in the cave", False),
    ("and_all", "the dragon in the cave under the mountain", True),
    ("not_any", "the dragon in the cave", False),
    ("not_any", "the dragon sleeps", True),
    ("not_all", "the dragon in the cave under the mountain", False),
    ("not_all", "the dragon in the cave", True),
    ("and_all", "the cave under the mountain", False),  # the primary key is still needed
])
def test_secondary_keys_follow_the_selective_logic(chat, logic, message, fires):
    entry = {"keys": ["dragon"], "secondary_keys": ["cave", "mountain"], "selective": True,
             "content": "The dragon is old."}
    if logic:
        entry["selective_logic"] = logic
    talk = chat([entry])
    talk.say(message)
    assert talk.fired() == (["The dragon is old."] if fires else [])


def test_secondary_keys_are_ignored_unless_selective(chat):
    talk = chat([{"keys": ["dragon"], "secondary_keys": ["cave"], "content": "Old."}])
    talk.say("a dragon")
    assert talk.fired() == ["Old."]


@pytest.mark.parametrize(("entry", "message", "fires"), [
    ({"keys": ["Rome"]}, "we went to rome", True),
    ({"keys": ["Rome"], "case_sensitive": True}, "we went to rome", False),
    ({"keys": ["Rome"], "case_sensitive": True}, "we went to Rome.", True),
    ({"keys": ["cat"]}, "a category of things", False),
    ({"keys": ["cat"]}, "the cat, asleep", True),
    ({"keys": ["cat"], "match_whole_words": False}, "a category of things", True),
    ({"keys": ["old town"]}, "in the old town square", True),
    ({"keys": ["Straße"]}, "die straße ist nass", True),
])
def test_case_and_whole_words(chat, entry, message, fires):
    talk = chat([{**entry, "content": "Fired."}])
    talk.say(message)
    assert talk.fired() == (["Fired."] if fires else [])


def test_order_and_position_decide_where_entries_go(chat):
    talk = chat([{"keys": ["x"], "content": "after-5", "insertion_order": 5,
                  "position": "after_char"},
                 {"keys": ["x"], "content": "before-9", "insertion_order": 9},
                 {"keys": ["x"], "content": "before-1", "insertion_order": 1},
                 {"keys": ["x"], "content": "after-2", "insertion_order": 2,
                  "position": "after_char"}])
    talk.say("x")
    assert talk.fired() == ["before-1", "before-9", "after-2", "after-5"]


def test_the_budget_keeps_the_highest_orders_and_stops_at_the_first_that_does_not_fit(chat):
    # 30 bytes each = 10 estimated tokens; a budget of 25 holds two.
    texts = {order: f"entry {order:02d} " + "y" * 21 for order in (10, 30, 20, 5)}
    talk = chat([{"keys": ["go"], "content": text, "insertion_order": order}
                 for order, text in texts.items()], token_budget=25)
    done = talk.say("go")
    assert talk.fired() == [texts[20], texts[30]]
    assert [r["tokens"] for r in talk.reply(done["message_id"])["world_info"]] == [10, 10]


def test_recursion_activates_entries_named_by_other_entries_up_to_the_cap(chat):
    chain = [{"keys": ["start"], "content": "It leads to alpha.", "insertion_order": 1},
             {"keys": ["alpha"], "content": "Alpha leads to beta.", "insertion_order": 2},
             {"keys": ["beta"], "content": "Beta leads to gamma.", "insertion_order": 3},
             {"keys": ["gamma"], "content": "Gamma leads to delta.", "insertion_order": 4},
             {"keys": ["delta"], "content": "Delta is the end.", "insertion_order": 5}]
    flat = chat(chain)
    flat.say("start")
    assert flat.fired() == ["It leads to alpha."]
    deep = chat(chain, recursive_scanning=True)
    deep.say("start")
    # the first pass and three recursion passes (MAX_RECURSION): delta never comes in
    assert deep.fired() == ["It leads to alpha.", "Alpha leads to beta.",
                            "Beta leads to gamma.", "Gamma leads to delta."]


def test_recursion_flags_of_sillytavern_entries_are_honoured(server, client, claude, script):
    def entry(key, content, **extensions):
        return {"keys": [key], "content": content, "extensions": extensions, "enabled": True,
                "insertion_order": 100}
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Tess", "description": "", "character_book": {
            "recursive_scanning": True, "extensions": {}, "entries": [
                entry("start", "Mentions alpha and beta."),
                entry("alpha", "Alpha (never by recursion).", exclude_recursion=True),
                entry("beta", "Beta, which mentions gamma.", prevent_recursion=True),
                entry("gamma", "Gamma."),
                entry("later", "Only by recursion.", delay_until_recursion=True),
                entry("zeta", "Zeta mentions later.")]}}}
    persona = upload(client, json.dumps(card).encode(), filename="tess.json").get_json()
    talk = Conversation(server, client, claude, persona)
    try:
        talk.say("start, and also later and zeta")
        assert sorted(talk.fired()) == sorted(["Mentions alpha and beta.",
                                               "Beta, which mentions gamma.",
                                               "Zeta mentions later.", "Only by recursion."])
    finally:
        talk.close()


def test_shared_books_reach_every_persona_they_are_attached_to(chat, client):
    shared = client.post("/api/world-books", json={"name": "Shared world"}).get_json()
    client.post(f"/api/world-books/{shared['id']}/entries",
                json={"keys": ["moon"], "content": "The moon is green here."})
    one = chat([{"keys": ["sun"], "content": "The sun is blue."}])
    two = chat([])
    for talk in (one, two):
        assert client.put(f"/api/personas/{talk.session['persona_id']}/world-books/"
                          f"{shared['id']}").status_code == 200
    one.say("sun and moon")
    assert one.fired() == ["The sun is blue.", "The moon is green here."]
    two.say("sun and moon")
    assert two.fired() == ["The moon is green here."]
    client.delete(f"/api/personas/{two.session['persona_id']}/world-books/{shared['id']}")
    two.say("moon")
    assert two.fired() == []


def test_card_placeholders_are_filled_in_entries(chat, client):
    client.put("/api/settings", json={"user_name": "Sam"})
    talk = chat([{"keys": ["{{user}}'s ship"], "content": "{{char}} built {{user}}'s ship."}])
    talk.say("Where is Sam's ship?")
    assert talk.fired() == ["Mira built Sam's ship."]


def test_without_a_name_entries_say_user_as_card_text_does(chat):
    """No name set: `{{user}}` in an entry is "User", as in the card's own text (an entry is
    card text, often imported with it), not the prose word "the user"."""
    talk = chat([{"keys": ["{{user}}'s ship"], "content": "{{char}} built {{user}}'s ship."}])
    talk.say("Where is User's ship?")
    assert talk.fired() == ["Mira built User's ship."]


def test_a_german_persona_gets_the_german_section(chat):
    talk = chat([{"keys": ["Leuchtturm"], "content": "Der Leuchtturm steht auf dem Felsen."}],
                language="de")
    talk.say("Erzähl vom Leuchtturm!")
    assert talk.fired() == ["Der Leuchtturm steht auf dem Felsen."]
    assert "## Weltwissen" in split_system(talk.request())[1]
