"""README.md is the front door (issue 10 §4): at most 10,000 characters, the two commands first,
and every reference page in docs/ linked from it (links that resolve)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = ("```bash\n"
            "bash scripts/serve.sh   # set up .venv and serve the app on http://127.0.0.1:5000\n"
            "bash scripts/test.sh    # set up .venv (+ Debian's chromium) and run the whole test "
            "suite\n```")


def test_the_readme_is_short():
    assert len(README) <= 10_000


def test_the_two_commands_come_first():
    title, rest = README.split("\n", 1)
    assert title.startswith("# ")
    assert rest.lstrip("\n").startswith(COMMANDS)


def test_every_reference_page_is_linked_and_every_link_resolves():
    linked = set(re.findall(r"\]\((docs/[^)#\s]+)", README))
    assert all((ROOT / link).exists() for link in linked), linked
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, f"not linked from README.md: {sorted(pages - linked)}"
