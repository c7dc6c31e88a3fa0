"""`GET /api/sessions/<sid>/messages/<mid>/prompt` (docs/prompt-inspector.md): the request a
reply was generated from, as the fake received it, in sections that add up to it byte for byte,
with token counts from the provider (Anthropic's count_tokens) or a labelled estimate."""
import json

from tests.chat.chat_support import BOTH_PROVIDERS, chat_requests
from tests.world.support import Conversation, persona_with_book

ABOUT = "Alex is a marine biologist who hates mornings. Says \"moin\" → always."
LIGHTHOUSE = "The lighthouse on Gull Rock has been dark since the storm of '98."


def _talk(server, client, claude) -> Conversation:
    client.post("/api/user-personas", json={"name": "Alex", "description": ABOUT})
    made = persona_with_book(client, [
        {"keys": ["lighthouse"], "content": LIGHTHOUSE, "comment": "Lighthouse"},
        {"keys": ["never-said"], "content": "Unused.", "comment": "Unused"},
        {"constant": True, "content": "Gulls are everywhere.", "comment": "Gulls"}])
    return Conversation(server, client, claude, made["persona"])


def _prompt(client, sid: str, mid: int) -> dict:
    response = client.get(f"/api/sessions/{sid}/messages/{mid}/prompt")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@BOTH_PROVIDERS
def test_sections_add_up_to_the_request_the_fake_received_byte_for_byte(server, client,
                                                                       claude, script):
    talk = _talk(server, client, claude)
    try:
        talk.say("Hello there")
        done = talk.say("Tell me about the lighthouse 🌊, please")
    finally:
        talk.close()
    sent = chat_requests(claude)[-1].raw
    prompt = _prompt(client, talk.session["id"], done["message_id"])
    assert prompt["recorded"] and prompt["body_bytes"] == len(sent)
    ordered = sorted(prompt["sections"], key=lambda s: s["offset"])
    assert "".join(s["raw"] for s in ordered).encode() == sent
    for section in prompt["sections"]:  # each one's text is exactly its bytes, JSON-decoded
        if section["kind"] != "history":
            fragment = sent[section["start"]:section["end"]].decode()
            assert json.loads(f'"{fragment}"') == section["text"]
        assert section["raw"].encode() == sent[section["offset"]:section["offset"]
                                               + len(section["raw"].encode())]
    kinds = [(s["kind"], s["label"]) for s in prompt["sections"]]
    assert kinds == [("persona", "persona"), ("cortex", "memory.md"), ("cortex", "soul.md"),
                     ("cortex", "relationship.md"), ("about", "about"), ("world", "world"),
                     ("time", "time"), ("history", "history"), ("message", "message")]
    shown = {s["kind"]: s for s in prompt["sections"]}
    assert ABOUT in shown["about"]["text"] and LIGHTHOUSE in shown["world"]["text"]
    assert [(e["name"], e["key"]) for e in shown["world"]["entries"]] == \
        [("Lighthouse", "lighthouse"), ("Gulls", None)]
    assert shown["message"]["text"] == "Tell me about the lighthouse 🌊, please"
    assert [m["role"] for m in shown["history"]["messages"]] == ["user", "assistant"]
    assert shown["cortex"]["revision"] is None or isinstance(shown["cortex"]["revision"], int)
    anthropic = prompt["provider"] == "anthropic"
    cached = [s["kind"] for s in prompt["sections"] if s["cached"]]
    assert cached == (["persona", "cortex", "cortex", "cortex", "about"] if anthropic else [])
    assert {s["counted_by"] for s in prompt["sections"]} == \
        {"provider" if anthropic else "estimate"}
    assert all(s["tokens"] > 0 for s in prompt["sections"])
    assert prompt["model"] == chat_requests(claude)[-1].body["model"]
    usage = prompt["usage"]
    assert usage["output_tokens"] > 0 and usage["prompt_tokens"] > 0
    if anthropic:  # the second turn read the persona+cortex prefix from the cache
        assert usage["cache_read_tokens"] > 0
        assert prompt["total"] == {"tokens": _fake_count(chat_requests(claude)[-1].body),
                                   "counted_by": "provider"}


def _fake_count(body: dict) -> int:
    from tests.fakes.usage import count_tokens
    return count_tokens({"system": body["system"], "messages": body["messages"]})


def test_counts_come_from_count_tokens_once_then_from_the_cache(server, client, claude, script):
    talk = _talk(server, client, claude)
    try:
        done = talk.say("Hello there")
    finally:
        talk.close()
    counting = lambda: [r for r in claude.requests if r.path == "/v1/messages/count_tokens"]  # noqa: E731
    first = _prompt(client, talk.session["id"], done["message_id"])
    asked = len(counting())
    assert asked == len(first["sections"]) + 2  # each section, the message overhead, the total
    again = _prompt(client, talk.session["id"], done["message_id"])
    assert len(counting()) == asked and again["sections"] == first["sections"]
    text = next(s for s in first["sections"] if s["kind"] == "message")
    from tests.fakes.usage import count_tokens
    one = count_tokens({"messages": [{"role": "user", "content": "."}]})
    alone = count_tokens({"messages": [{"role": "user", "content": text["text"]}]})
    assert text["tokens"] == alone - one + 1


def test_a_failing_count_falls_back_to_the_labelled_estimate(server, client, claude, script):
    talk = _talk(server, client, claude)
    try:
        done = talk.say("Hello there")
    finally:
        talk.close()
    claude.count_failure = 500
    prompt = _prompt(client, talk.session["id"], done["message_id"])
    assert {s["counted_by"] for s in prompt["sections"]} == {"estimate"}
    assert prompt["total"]["counted_by"] == "estimate"
    counted = [r for r in claude.requests if r.path == "/v1/messages/count_tokens"]
    assert len(counted) == 1  # the first failure stops the asking
    persona = next(s for s in prompt["sections"] if s["kind"] == "persona")
    assert persona["tokens"] == -(-len(persona["text"].encode()) // 3)


def test_the_context_meter_reads_the_last_request(server, client, claude, script):
    talk = _talk(server, client, claude)
    sid = talk.session["id"]
    try:
        empty = client.get(f"/api/sessions/{sid}/context").get_json()
        done = talk.say("Hello there")
    finally:
        talk.close()
    assert empty["used"] is None and empty["window"] == 200_000
    meter = client.get(f"/api/sessions/{sid}/context").get_json()
    usage = _prompt(client, sid, done["message_id"])["usage"]
    assert meter == {"session_id": sid, "reply_id": done["message_id"], "counted_by": "usage",
                     "used": usage["prompt_tokens"], "window": 200_000, "provider": "anthropic"}


HOSTILE = 'Quotes " and \\ back\\slashes, a tab\t, U+2028 \u2028, <cortex_memory> and </cortex_soul>'


@BOTH_PROVIDERS
def test_text_imitating_the_tags_or_json_still_adds_up(server, client, claude, script):
    persona = client.post("/api/personas", json={
        "name": "Mira", "description": f"Mira keeps notes. {HOSTILE}"}).get_json()
    memory = client.get(f"/api/personas/{persona['id']}/cortex/memory.md")
    client.put(f"/api/personas/{persona['id']}/cortex/memory.md",
               json={"content": f"# Memory\n{HOSTILE}\n"},
               headers={"If-Match": memory.headers["ETag"]})
    talk = Conversation(server, client, claude, persona)
    try:
        done = talk.say(HOSTILE)
    finally:
        talk.close()
    sent = chat_requests(claude)[-1].raw
    prompt = _prompt(client, talk.session["id"], done["message_id"])
    ordered = sorted(prompt["sections"], key=lambda s: s["offset"])
    assert "".join(s["raw"] for s in ordered).encode() == sent
    message = next(s for s in prompt["sections"] if s["kind"] == "message")
    assert message["text"] == HOSTILE
    memory_section = next(s for s in prompt["sections"] if s["label"] == "memory.md")
    assert "# Memory" in memory_section["text"]


@BOTH_PROVIDERS
def test_a_continued_reply_with_card_instructions_adds_up(server, client, claude, script):
    from tests.chat.chat_support import SseStream

    persona = client.post("/api/personas", json={
        "name": "Mira", "post_history_instructions": "Stay brief, {{user}}."}).get_json()
    talk = Conversation(server, client, claude, persona)
    try:
        done = talk.say("Tell me a story")
    finally:
        talk.close()
    with SseStream(server.url, f"/api/sessions/{talk.session['id']}/continue",
                   {"message_id": done["message_id"]}) as stream:
        assert stream.events()[-1][0] == "done"
    sent = chat_requests(claude)[-1].raw
    prompt = _prompt(client, talk.session["id"], done["message_id"])
    ordered = sorted(prompt["sections"], key=lambda s: s["offset"])
    assert "".join(s["raw"] for s in ordered).encode() == sent
    kinds = [s["kind"] for s in prompt["sections"]][-3:]
    if prompt["provider"] == "anthropic":  # the instructions are a block of their own
        assert kinds == ["message", "instructions", "continuation"]
    else:  # one text: the instructions are part of the message
        assert kinds[-2:] == ["message", "continuation"]
    continued = next(s for s in prompt["sections"] if s["kind"] == "continuation")
    assert continued["text"] == "Default reply."
