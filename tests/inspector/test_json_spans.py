"""The byte spans the inspector cuts sections by: every string of a JSON body, as the SDKs
encode it (compact, `ensure_ascii` off; also on), is found at its exact bytes, and every
character offset inside one maps to the byte where that character begins."""
import json

from hypothesis import given, settings, strategies as st

from src.utils.services.json_spans import char_to_byte, decode, string_spans

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
BODY = st.fixed_dictionaries({
    "max_tokens": st.integers(1, 10**6),
    "messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                                "content": TEXT}), max_size=4),
    "system": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=3),
    "extra": st.lists(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False,
                                                                    allow_infinity=False))),
})


def _value(body, path):
    for key in path:
        body = body[key]
    return body


def _strings(value, path):
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


@settings(max_examples=150, deadline=None)
@given(BODY, st.booleans())
def test_every_string_is_found_at_its_bytes(body, ascii_only):
    raw = json.dumps(body, ensure_ascii=ascii_only, separators=(",", ":")).encode()
    spans = string_spans(raw)
    assert set(spans) == set(_strings(body, ()))
    for path, (start, end) in spans.items():
        token = raw[start:end]
        text = decode(token)
        assert text == _value(body, path)
        for index in range(len(text) + 1):
            cut = char_to_byte(token, index)
            assert decode(b'"' + token[1:cut] + b'"') == text[:index]
