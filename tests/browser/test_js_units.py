"""Unit tests of browser-side modules, run in the real Chromium: the three-way merge behind the
memory editor's merge view and the relative-time formatter (with a fixed clock)."""
import datetime as dt

import pytest

from src.app import create_app
from src.utils import provider
from tests.browser.conftest import API_KEY, checked_page, settle
from tests.fakes.claude import FakeClaude
from tests.support.key_hygiene import LeakWatch, ScanningMiddleware
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.browser

NOW = dt.datetime(2026, 5, 12, 14, 0, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def shared_page(browser, tmp_path_factory):
    """One page of the app (en-US, UTC; it embeds the interface strings the modules read) from
    which the app's ES modules can be imported, shared by this module's tests: they only call
    pure functions of the modules, so loading the page once instead of per test saves about two
    seconds a test. Yields (page, problems, watch); `module_page` checks both after each test."""
    fake = FakeClaude()
    fake.api_key = API_KEY
    data_dir = tmp_path_factory.mktemp("js_units")
    app = create_app({"DATA_DIR": str(data_dir), "ANTHROPIC_API_KEY": API_KEY,
                      "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_MAX_RETRIES": 0,
                      "ANTHROPIC_TIMEOUT": 10.0, "CORTEX_WORKER": False, "TESTING": True})
    watch = LeakWatch()
    watch.add_secret(API_KEY)
    watch.add_data_dir(app.config["DATA_DIR"])
    app.wsgi_app = ScanningMiddleware(app.wsgi_app, watch)
    problems: list[str] = []
    try:
        with LiveServer(app) as server, checked_page(browser, problems=problems, locale="en-US",
                                                     timezone_id="UTC") as tab:
            tab.clock.set_fixed_time(NOW)
            tab.goto(server.url + "/settings")
            tab.wait_for_selector("body[data-ready=true]")
            yield tab, problems, watch
    finally:
        provider.shutdown_services(app)
        fake.close()


@pytest.fixture
def module_page(shared_page, key_hygiene):
    """The shared page; a script error, console error or CSP violation during the test, or a key
    in what the app sent or stored, fails it (as an error in teardown)."""
    tab, problems, watch = shared_page
    key_hygiene.add_secret(API_KEY)
    seen = len(problems)
    yield tab
    settle(tab)
    watch.scan_files()
    assert problems[seen:] == [], problems[seen:]
    assert watch.news() is None, watch.news()


def _merge(page, base: str, saved: str, mine: str, choices=()) -> dict:
    return page.evaluate("""async ([base, saved, mine, choices]) => {
        const m = await import('/static/js/lib/merge3.js');
        const chunks = m.merge3(base, saved, mine);
        return { chunks, text: m.mergedText(chunks, choices), conflicts: m.conflictCount(chunks) };
    }""", [base, saved, mine, list(choices)])


@pytest.mark.parametrize("base, saved, mine, merged", [
    ("a\nb\nc\n", "a\nb\nc\nd\n", "A\nb\nc\n", "A\nb\nc\nd\n"),          # append vs edit
    ("a\nb\nc\n", "a\nc\n", "a\nb\nc\nz\n", "a\nc\nz\n"),                  # delete vs append
    ("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", "a\nB\nc\n"),                  # the same change
    ("a\nb\nc\n", "a\nb\nc\n", "x\ny\n", "x\ny\n"),                        # only mine changed
    ("", "new\n", "", "new\n"),                                            # from empty
    ("a\nb", "a\nb\nc", "a2\nb", "a2\nb\nc"),                              # no final newline
    ("l1\nl2\nl3\nl4\nl5\n", "l1\nS\nl3\nl4\nl5\n", "l1\nl2\nl3\nl4\nM\n", "l1\nS\nl3\nl4\nM\n"),
])
def test_non_overlapping_changes_merge_without_conflicts(module_page, base, saved, mine, merged):
    result = _merge(module_page, base, saved, mine)
    assert result["conflicts"] == 0
    assert result["text"] == merged


def test_overlapping_changes_become_hunks_resolved_by_choice(module_page):
    base, saved, mine = "h\n- one\n\n- two\n", "h\n- one S\n\n- two S\n", "h\n- one M\n\n- two M\n"
    result = _merge(module_page, base, saved, mine)
    assert result["conflicts"] == 2
    hunks = [c for c in result["chunks"] if c["kind"] == "conflict"]
    assert hunks[0] == {"kind": "conflict", "base": ["- one"], "saved": ["- one S"], "mine": ["- one M"]}
    assert result["text"] == "h\n- one S\n- one M\n\n- two S\n- two M\n"   # keep both by default
    assert _merge(module_page, base, saved, mine, ["saved", "mine"])["text"] == "h\n- one S\n\n- two M\n"


def test_insertions_at_the_same_place_conflict_and_keep_both(module_page):
    result = _merge(module_page, "a\n", "a\nS\n", "a\nM\n")
    assert result["conflicts"] == 1
    assert result["text"] == "a\nS\nM\n"


def test_removed_lines_are_reported_with_their_side(module_page):
    chunks = _merge(module_page, "a\nb\nc\n", "a\nc\n", "a\nb\nc\n")["chunks"]
    assert {"kind": "saved", "lines": [], "base": ["b"]} in chunks


def test_large_files_merge_line_by_line(module_page):
    """1,500 lines on each side stay under the merge's table cap (MAX_CELLS, which bounds its
    time and memory by construction): the middle is matched line by line, so the two changes
    far apart merge without a conflict."""
    base = "".join(f"line {i}\n" for i in range(1500))
    saved = base.replace("line 10\n", "line ten\n") + "tail\n"
    mine = base.replace("line 700\n", "line seven hundred\n")
    result = module_page.evaluate("""async ([base, saved, mine]) => {
        const m = await import('/static/js/lib/merge3.js');
        const chunks = m.merge3(base, saved, mine);
        const text = m.mergedText(chunks);
        return { ok: text.includes('line ten') && text.includes('seven'),
                 conflicts: m.conflictCount(chunks),
                 matched: m.matchLines(m.splitLines(base), m.splitLines(saved)).length };
    }""", [base, saved, mine])
    assert result == {"ok": True, "conflicts": 0, "matched": 1500}


@pytest.mark.parametrize("offset_seconds, text", [
    (-10, "just now"),
    (-50, "50 seconds ago"),
    (-47 * 60, "47 minutes ago"),
    (-2 * 3600, "2 hours ago"),
    (-26 * 3600, "yesterday"),
    (-3 * 86400, "3 days ago"),
    (5 * 60, "in 5 minutes"),
    (-10 * 86400, "May 2, 2026, 2:00 PM"),
])
def test_format_relative_uses_the_right_unit(module_page, offset_seconds, text):
    iso = (NOW + dt.timedelta(seconds=offset_seconds)).isoformat()
    result = module_page.evaluate("""async (iso) => {
        const dom = await import('/static/js/lib/dom.js');
        return dom.formatRelative(iso);
    }""", iso)
    assert result == text


def test_history_diff_marks_changed_words_without_prefixes(module_page):
    diff = ("--- a/memory.md\n+++ b/memory.md\n@@ -1,3 +1,3 @@\n # Memories\n"
            "-- Drinks green tea.\n+- Drinks black tea daily.\n--- a line that starts with dashes\n")
    result = module_page.evaluate("""async (diff) => {
        const { renderDiff } = await import('/static/js/lib/diff.js');
        const pre = document.createElement('pre');
        const counts = renderDiff(pre, diff);
        const lines = [...pre.children].map((el) => [el.tagName, el.textContent,
            [...el.querySelectorAll('mark')].map((m) => m.textContent)]);
        return { counts, lines };
    }""", diff)
    assert result["counts"] == {"added": 1, "removed": 2}
    assert result["lines"] == [
        ["SPAN", "Lines 1–3", []],
        ["SPAN", "# Memories", []],
        ["DEL", "- Drinks green tea.", ["green"]],
        ["INS", "- Drinks black tea daily.", ["black", "daily"]],
        ["DEL", "-- a line that starts with dashes", []],
    ]


def test_huge_inputs_stay_bounded_and_lose_nothing(module_page):
    result = module_page.evaluate("""async () => {
        const m = await import('/static/js/lib/merge3.js');
        const d = await import('/static/js/lib/diff.js');
        const base = Array.from({ length: 48000 }, (_, i) => String(i % 7)).join('\\n');
        const saved = 'S\\n' + base.split('\\n').reverse().join('\\n');
        const mine = base.split('\\n').sort().join('\\n') + '\\nM';
        const chunks = m.merge3(base, saved, mine);
        const text = m.mergedText(chunks);
        const long = 'word '.repeat(20000);
        const words = d.wordDiff(long, long + 'x');
        const matched = m.matchLines(m.splitLines(base), m.splitLines(saved)).length;
        return { hasSaved: text.startsWith('S\\n'), matched,
                 hasMine: text.endsWith('\\nM'), conflicts: m.conflictCount(chunks),
                 wordsWhole: words.after.length === 1 && words.after[0].changed };
    }""")
    # bounded by construction, not by a stopwatch: past the caps (MAX_CELLS in merge3.js and
    # diff.js) no table is built: of base and saved only the common last line ("0") is matched,
    # the middle is one hunk, and the word diff is one whole change
    assert result["matched"] == 1 and result["wordsWhole"]
    assert result["hasSaved"] and result["hasMine"] and result["conflicts"] >= 1


TAGS = "".join(chr(0xE0000 + ord(c)) for c in "rm")     # "ASCII smuggling": invisible "rm"


@pytest.mark.parametrize("text, shown, count", [
    ("cat\u200b", "cat⟦U+200B⟧", 1),
    ("a\u202eb\u2066c\u2069", "a⟦U+202E⟧b⟦U+2066⟧c⟦U+2069⟧", 3),
    (f"ok{TAGS}.", "ok⟦U+E0072⟧⟦U+E006D⟧.", 2),
    ("x\u3164\u115f\u034f", "x⟦U+3164⟧⟦U+115F⟧⟦U+034F⟧", 3),
    ("a\ufe01\U000e0100", "a⟦U+FE01⟧⟦U+E0100⟧", 2),
    ("\u2764\ufe0f love", "\u2764\ufe0f love", 0),                 # emoji presentation stays
    ("\u2764\ufe0f\ufe0f", "\u2764\ufe0f⟦U+FE0F⟧", 1),              # a run is not
    ("\ufe0f at the start", "⟦U+FE0F⟧ at the start", 1),
    ("plain Grüße, 日本", "plain Grüße, 日本", 0),
])
def test_invisible_characters_in_proposals_are_shown(module_page, text, shown, count):
    result = module_page.evaluate("""async (text) => {
        const m = await import('/static/js/settings/invisible.js');
        return [m.visible(text), m.hiddenCount(text)];
    }""", text)
    assert result == [shown, count]
