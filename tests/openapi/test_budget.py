"""The hand-kept part of the OpenAPI document stays small (issue 22, DESIGN §15).

The rule (docs/development.md#the-openapi-document): every module of `src/utils/openapi/` but
`table.py` is hand-kept document data (route tables, shared parts, the intro), and counts with
every line that is not blank, not a comment and not a docstring (imports and helpers included).
`table.py` is the generator and may hold no document text. View and model docstrings are not
counted: they document the code they sit on, and the document reuses them.
"""
import ast
from pathlib import Path

OPENAPI = Path(__file__).resolve().parents[2] / "src" / "utils" / "openapi"
GENERATOR = "table.py"
BUDGET = 300


def _docstrings(tree: ast.AST) -> set[int]:
    """Ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def counted_lines(source: str) -> int:
    """Lines that are not blank, not a comment and not part of a docstring."""
    tree = ast.parse(source)
    skipped = set()
    for node in ast.walk(tree):
        if id(node) in _docstrings(tree):
            skipped.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in skipped)


def test_counting_rule():
    source = '"""Module.\n\nMore."""\nimport x\n\n# a comment\nA = {"k": (\n    "v")}\n\n\n' \
             'def f():\n    """Doc."""\n    return 1\n'
    assert counted_lines(source) == 5


def test_hand_kept_lines_stay_within_budget():
    sizes = {path.name: counted_lines(path.read_text(encoding="utf-8"))
             for path in sorted(OPENAPI.glob("*.py")) if path.name != GENERATOR}
    assert sum(sizes.values()) <= BUDGET, f"{sum(sizes.values())} hand-kept lines: {sizes}"


def test_the_generator_holds_no_document_text():
    """Every string in table.py outside docstrings is a name or a key, never a sentence."""
    tree = ast.parse((OPENAPI / GENERATOR).read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    prose = [node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and id(node) not in docstrings and len(node.value.split()) > 1]
    assert prose == []
