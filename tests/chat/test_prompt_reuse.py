"""The prompt's rendered prefix and time line are reused while their inputs stay the same, and
rendered anew the moment any of them changes (docs/performance.md, issue #23)."""
from datetime import datetime, timedelta, timezone

import pytest

from src.utils.models.personas import stand_in
from src.utils.services import prompt_builder

NOW = datetime(2026, 11, 27, 9, 41, 12, tzinfo=timezone(timedelta(hours=1)))
CORTEX = {"cortex_memory": "Likes tea.", "cortex_soul": "Calm.", "cortex_relationship": "Friends."}


def _persona(**fields):
    return stand_in("reuse", "en").model_copy(update={
        "name": "Mira", "description": "A lighthouse keeper.", "personality": "Dry humour.",
        "scenario": "A storm.", "greeting": "Ahoy, {{user}}!", "example_dialogue": "<START>",
        "system_prompt": "Play {{char}}. {{original}}", "use_card_prompts": True, **fields})


def _prefix(persona, user: str = "Sam", language: str = "en", cortex=CORTEX) -> str:
    return prompt_builder.system_blocks(persona, user, cortex, language, NOW)[0].text


def test_the_same_inputs_reuse_the_rendered_prefix():
    first = _prefix(_persona())
    assert _prefix(_persona()) is first  # rendered once: the second turn reuses the text


@pytest.mark.parametrize("change", [
    {"name": "Nora"}, {"description": "A baker."}, {"personality": "Loud."},
    {"scenario": "Calm seas."}, {"greeting": "Hello."}, {"example_dialogue": "<START> hi"},
    {"system_prompt": "Be {{char}}."}, {"use_card_prompts": False},
    {"card": {"nickname": "Mi"}},
])
def test_any_change_of_a_card_field_renders_the_prefix_anew(change):
    before = _prefix(_persona())
    after = _prefix(_persona(**change))
    assert after != before
    assert after == prompt_builder._stable_text(_persona(**change), "Sam", "Sam", "en", CORTEX)


def test_the_user_the_language_and_the_cortex_are_part_of_the_key():
    base = _prefix(_persona())
    assert _prefix(_persona(), user="Kim") != base
    assert _prefix(_persona(), language="de") != base
    assert _prefix(_persona(), cortex={**CORTEX, "cortex_memory": "Likes coffee."}) != base
    assert _prefix(_persona(), cortex=None) != base


def test_the_time_line_follows_the_minute_and_the_offset_of_the_same_instant():
    assert prompt_builder.format_time(NOW, "en") == "Friday, 2026-11-27 09:41 (UTC+01:00)"
    assert prompt_builder.format_time(NOW + timedelta(minutes=1), "en").endswith(
        "09:42 (UTC+01:00)")
    # the same instant in another zone (a clock change) compares equal but reads otherwise
    other = NOW.astimezone(timezone(timedelta(hours=2)))
    assert other == NOW
    assert prompt_builder.format_time(other, "en") == "Friday, 2026-11-27 10:41 (UTC+02:00)"
    assert prompt_builder.format_time(NOW, "de").startswith("Freitag, ")
