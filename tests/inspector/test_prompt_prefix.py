"""The prefix the inspector stores once per content (the first system text) is found by its
JSON encoding in the body; that search gives the same bytes as walking every string of the
body (`json_spans`), for both providers' shapes, and a body encoded otherwise is still walked."""
import json

from hypothesis import given, settings, strategies as st

from src.utils.api_request.types import RequestConfig, SentRequest, SystemBlock
from src.utils.services import prompt_record
from src.utils.services.json_spans import char_to_byte, string_spans

TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)
SYSTEM = st.lists(TEXT, min_size=1, max_size=3)
HISTORY = st.lists(TEXT, max_size=4)


def _capture(system: list[str], provider: str, body: dict, ascii_only: bool = False):
    capture = prompt_record.SentCapture(RequestConfig(
        system_prompt=[SystemBlock(text, label=f"b{i}") for i, text in enumerate(system)],
        messages=[]))
    raw = json.dumps(body, ensure_ascii=ascii_only, separators=(",", ":")).encode()
    capture(SentRequest(provider, "m", raw))
    return capture


def _walked(capture) -> tuple[int, int]:
    """The span as the body walk finds it (the reference)."""
    sent, spans = capture.sent, string_spans(capture.sent.body)
    if sent.provider == "openai_compatible":
        start, end = spans[("messages", 0, "content")]
        return start + 1, start + char_to_byte(sent.body[start:end], len(capture.first))
    start, end = spans[("system", 0, "text")]
    return start + 1, end - 1


def _anthropic(system, history):
    return {"max_tokens": 10, "messages": [{"role": "user", "content": h} for h in history],
            "model": "m", "system": [{"type": "text", "text": t} for t in system]}


def _openai(system, history):
    return {"messages": [{"role": "system", "content": "\n\n".join(system)},
                         *({"role": "user", "content": h} for h in history)], "model": "m"}


@settings(max_examples=150, deadline=None)
@given(SYSTEM, HISTORY, st.sampled_from(["anthropic", "openai_compatible"]), st.booleans())
def test_the_found_prefix_holds_the_walked_prefix_bytes(system, history, provider, ascii_only):
    body = (_openai if provider == "openai_compatible" else _anthropic)(system, history)
    capture = _capture(system, provider, body, ascii_only)
    start, end = prompt_record._prefix(capture.sent, capture.layout, capture.first)
    walked = _walked(capture)
    assert capture.sent.body[start:end] == capture.sent.body[walked[0]:walked[1]]


def test_a_message_holding_the_system_text_first_still_gives_its_exact_bytes():
    system = ['You are "Mira".\nBe kind ✓']
    body = {"messages": [{"role": "user", "content": system[0]},
                         {"role": "user", "content": "system"}], "system": system[0]}
    capture = _capture(system, "anthropic", body)
    start, end = prompt_record._prefix(capture.sent, capture.layout, capture.first)
    assert json.loads(b'"' + capture.sent.body[start:end] + b'"') == system[0]
    assert capture.sent.body.index(b'"system":') < start


def test_a_body_encoded_another_way_is_walked():
    system = ["Grüße, ✓"]
    capture = _capture(system, "anthropic", _anthropic(system, ["hi"]), ascii_only=True)
    assert prompt_record._encoded_span(capture.sent, capture.first) is None
    assert prompt_record._prefix(capture.sent, capture.layout, capture.first) == _walked(capture)
