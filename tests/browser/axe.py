"""axe-core (vendored, tests/browser/vendor/axe-core/) run inside a page the tests reached.

The pages' Content-Security-Policy allows scripts from the app's origin only, so axe is not added
as a <script> element (an inline one would be refused and reported as a violation, which fails
the page): its source is evaluated through the DevTools protocol, like any `page.evaluate`. The
page's own `securitypolicyviolation` watcher stays on, so anything axe itself did that the policy
refuses (an eval, an inline style sheet) would still fail the test."""
from pathlib import Path

AXE_VERSION = "4.14.1"
_SOURCE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
# axe's default rule set: WCAG 2.0, 2.1 and 2.2 A/AA plus its best practices; every impact counts.
# axe files a name on an element without a role (a <div aria-label>, which no assistive technology
# has to announce) under "needs review" rather than as a violation; here it fails like one. Its
# other needs-review findings (contrast over a gradient, a symbol as a button's text) are ones it
# cannot decide, and stay out.
FAILING_REVIEWS = ("aria-prohibited-attr",)
_RUN = """async (failingReviews) => {
    const results = await axe.run(document, { resultTypes: ['violations', 'incomplete'] });
    const reviews = results.incomplete.filter((rule) => failingReviews.includes(rule.id));
    return [...results.violations, ...reviews].map((rule) => ({
        id: rule.id, impact: rule.impact, help: rule.help,
        nodes: rule.nodes.map((node) => ({ target: node.target.join(' '),
                                           summary: node.failureSummary })),
    }));
}"""


def axe_source() -> str:
    """The vendored axe-core, checked to be the version the docs name."""
    text = _SOURCE.read_text(encoding="utf-8")
    assert text.startswith(f"/*! axe v{AXE_VERSION}"), "tests/browser/vendor/axe-core is not the pinned axe"
    return text


def violations(page, source: str) -> list[dict]:
    """axe's violations on the page as it is now (axe is loaded into the document once)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(f"{source}\n;undefined")
    return page.evaluate(_RUN, list(FAILING_REVIEWS))


def describe(found: dict[str, list[dict]]) -> str:
    """One line per failing element, grouped by the page state it was found in."""
    lines = []
    for state, rules in found.items():
        for rule in rules:
            for node in rule["nodes"]:
                lines.append(f"{state}: {rule['id']} ({rule['impact']}) {node['target']}: "
                             f"{rule['help']}; {node['summary']}")
    return "\n".join(lines)
