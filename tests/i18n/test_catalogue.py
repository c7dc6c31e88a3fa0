"""The interface's catalogues: complete in both languages, every named key exists, and no
user-visible text is written into a template or script instead (`python -m tests.i18n.audit`
prints the same findings)."""
import pytest

from src.utils import i18n
from tests.i18n import audit
from tests.i18n.literals import scan_script, scan_template


def test_every_interface_string_is_in_both_catalogues_and_nothing_is_left_untranslated():
    problems = audit.all_problems()
    assert not problems, "\n" + "\n".join(problems)


def test_the_catalogues_are_the_same_keys_with_the_same_placeholders():
    cats = audit.catalogues()
    assert set(cats["en"]) == set(cats["de"])
    assert len(cats["en"]) > 400
    broken = {**cats, "de": {**cats["de"], "chat.empty.title": "Chat mit {nom}", "chat.composer.send": " "}}
    del broken["de"]["chat.sidebar.new_chat"]
    found = audit.catalogue_problems(broken)
    assert "src/instructions/ui/de.json:0: missing key chat.sidebar.new_chat" in found
    assert "src/instructions/ui/de.json:0: empty value for chat.composer.send" in found
    assert any("placeholders of chat.empty.title differ" in line for line in found)


def test_unknown_keys_are_found_by_line():
    english = audit.catalogues()["en"]
    text = ("const a = t('chat.composer.send');\n"
            "const b = t('chat.composer.sned');\n"
            "const c = tn('chat.memory.counted', 3);\n"
            "const d = tn('settings.sleep.sessions', 2);\n"
            "const e = { queued: 'settings.jobs.qeued' };\n"
            "import x from './lib/dom.js';\n")
    assert audit.unknown_keys(text, english) == [
        (2, "chat.composer.sned"), (4, "settings.sleep.sessions"), (5, "settings.jobs.qeued")]


def test_template_scanner_flags_text_and_visible_attributes_with_their_lines():
    source = ("{% block title %}{{ t('app.name') }}{% endblock %}\n"
              "<button aria-label=\"Close sidebar\" class=\"icon-btn\">\n"
              "  <span aria-hidden=\"true\">&times;</span>\n"
              "</button>\n"
              "<p>Run <code>python -m src.app restore FILE</code> {{ t('x.y') }}</p>\n"
              "<input placeholder=\"Write a message…\" title=\"{{ t('a.b') }}\" id=\"composer-input\">\n"
              "<h2>\n  Welcome to\n  Persona Cortex, friend</h2>\n"
              "<a href=\"/api/openapi.json\">/api/openapi.json</a> <option>Deutsch</option>\n")
    assert scan_template(source) == [
        (2, 'aria-label="Close sidebar"'), (5, "Run"),
        (6, 'placeholder="Write a message…"'), (8, "Welcome to Persona Cortex, friend")]


def test_script_scanner_flags_prose_literals_but_not_code():
    source = """import { h } from '../lib/dom.js';
const el = h('div', { class: 'msg-body markdown', role: 'alert', 'data-x': 'a b' });
if (event.key === 'Enter') console.error('Missing key: do not flag this');
el.textContent = 'Copied';
toast(`${name} imported`);
h('p', { text: count ? t('a.b') : 'No greeting.' });
throw new Error(`#${id} is missing from the page`);
const label = { saved: 'From the saved version' };
node.setAttribute('rel', 'noopener noreferrer');
node.setAttribute('aria-label', 'Close the panel');
const url = `/api/personas/${seg(id)}/export?${params}`;
const text = `${p.summary || 'Proposed change'} (${files})`;
const raw = rule.replace('an integer', 'a whole number');  // i18n-ignore: server English
const re = /it's a regex with 'quotes' inside/;
"""
    assert scan_script(source) == [
        (4, "Copied"), (5, "{x} imported"), (6, "No greeting."), (8, "From the saved version"),
        (10, "Close the panel"), (12, "Proposed change")]


@pytest.mark.parametrize("chosen, header, expected", [
    ("en", "de-DE,de;q=0.9", "en"),          # the setting wins over the browser
    ("de", "en-US", "de"),
    (None, "de-DE,de;q=0.9,en;q=0.8", "de"),
    (None, "fr-FR, de;q=0.5, en;q=0.4", "de"),
    (None, "en;q=0.3, de;q=0.7", "de"),
    (None, "de;q=0, en", "en"),
    (None, "fr, it", "en"),
    (None, None, "en"),
    (None, "de;q=abc, en;q=0.1", "en"),       # a malformed weight counts as none
    (None, "\ud800;;;,,,=", "en"),
    (None, "x," * 200_000 + "de", "en"),      # huge headers are cut, not parsed whole
    (None, "DE-at", "de"),
])
def test_the_interface_language_is_the_setting_else_the_best_accepted_one(chosen, header, expected):
    assert i18n.choose(chosen, header) == expected


def test_translate_fills_placeholders_and_plural_picks_the_form():
    assert i18n.translate("de", "chat.empty.title", name="Theo") == "Chat mit Theo"
    assert i18n.translate("de", "chat.empty.title") == "Chat mit {name}"
    assert i18n.translate("de", "no.such.key") == "no.such.key"
    assert i18n.translate("xx", "chat.composer.send") == "Send"
    assert i18n.plural("de", "settings.sleep.sessions_since", 1) == "Seitdem 1 Gespräch."
    assert i18n.plural("de", "settings.sleep.sessions_since", 3) == "Seitdem 3 Gespräche."
    assert i18n.plural("en", "settings.archive.chars", 0) == "0 characters"
