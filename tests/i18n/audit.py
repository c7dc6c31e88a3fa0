"""Lists what is not translated: `.venv/bin/python -m tests.i18n.audit` (exit 1 if anything is).

Checks: every key in both catalogues with a non-empty value and the same `{placeholders}`;
every key that templates (`t('…')`, `tn('…', …)`) and scripts (`t('…')`, `tn('…', …)`,
`has('…')`) name exists; no user-visible literal text in templates or scripts (see
`literals.py`). Each finding is one line, `file:line: problem`.
"""
import json
import re
import sys
from pathlib import Path

from tests.i18n.literals import scan_script, scan_template

ROOT = Path(__file__).resolve().parents[2]
UI_DIR = ROOT / "src" / "instructions" / "ui"
TEMPLATES = ROOT / "src" / "templates"
SCRIPTS = ROOT / "src" / "static" / "js"
LANGUAGES = ("en", "de")
_KEY_USE = re.compile(r"\b(tn?|has)\(\s*['\"]([a-z0-9_.]+)['\"]")
_KEY_LITERAL = re.compile(r"['\"]([a-z]+(?:\.[a-z0-9_]+){2,})['\"]")
_PLACEHOLDERS = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def catalogues() -> dict[str, dict]:
    return {lang: json.loads((UI_DIR / f"{lang}.json").read_text(encoding="utf-8"))
            for lang in LANGUAGES}


def sources() -> list[Path]:
    """The templates and our own scripts (vendored libraries excluded)."""
    scripts = [p for p in sorted(SCRIPTS.rglob("*.js")) if "vendor" not in p.parts]
    return sorted(TEMPLATES.rglob("*.html")) + scripts


def catalogue_problems(cats: dict[str, dict]) -> list[str]:
    problems = []
    every = set().union(*cats.values())
    for lang, cat in cats.items():
        where = f"src/instructions/ui/{lang}.json"
        for key in sorted(every - set(cat)):
            problems.append(f"{where}:0: missing key {key}")
        for key, value in sorted(cat.items()):
            if not isinstance(value, str) or not value.strip():
                problems.append(f"{where}:0: empty value for {key}")
            elif any(not _PLACEHOLDERS.fullmatch(m) for m in re.findall(r"\{[^{}]*\}", value)):
                problems.append(f"{where}:0: a brace in {key} is not a {{placeholder}}")
    for key in sorted(set.intersection(*(set(c) for c in cats.values()))):
        names = {lang: set(_PLACEHOLDERS.findall(str(cats[lang][key]))) for lang in cats}
        if len({frozenset(v) for v in names.values()}) > 1:
            problems.append(f"src/instructions/ui/de.json:0: placeholders of {key} differ: {names}")
    return problems


def _exists(key: str, cat: dict, plural: bool) -> bool:
    return (f"{key}.other" in cat) if plural else key in cat


def unknown_keys(text: str, english: dict) -> list[tuple[int, str]]:
    """(line, key) of each key `text` names that the English catalogue lacks: keys in `t()`,
    `tn()` and `has()` calls, and string literals shaped like a key of a known group."""
    groups = {key.split(".")[0] for key in english}
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        named = [(call == "tn", key) for call, key in _KEY_USE.findall(line)]
        called = {key for _, key in named}
        named += [(False, key) for key in _KEY_LITERAL.findall(line) if key not in called
                  and key.split(".")[0] in groups and f"{key}.other" not in english]
        found += [(number, key) for plural, key in named if not _exists(key, english, plural)]
    return found


def usage_problems(cats: dict[str, dict]) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}: unknown key {key}" for path in sources()
            for line, key in unknown_keys(path.read_text(encoding="utf-8"), cats["en"])]


def literal_problems() -> list[str]:
    problems = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        found = scan_template(text) if path.suffix == ".html" else scan_script(text)
        problems += [f"{path.relative_to(ROOT)}:{line}: literal text {snippet!r}"
                     for line, snippet in found]
    return problems


def all_problems() -> list[str]:
    cats = catalogues()
    return catalogue_problems(cats) + usage_problems(cats) + literal_problems()


if __name__ == "__main__":
    found = all_problems()
    print("\n".join(found) or "Everything is translated.")
    sys.exit(1 if found else 0)
