"""The layers as drawn: an AST walk over every module's imports fails on an upward edge.

`cortex/` (memory) never reaches into `services/` (conversation); `api_request/` (the provider
boundary) knows nothing of the app; neither services nor cortex know the Flask routes. Imports
inside functions count too, and relative imports are resolved against the importing module.
"""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
FORBIDDEN = {
    "cortex": {"services", "routes"},
    "services": {"routes"},
    "api_request": {"cortex", "services", "routes", "storage"},
}


def _module_name(path: Path) -> str:
    parts = ["src", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module named by an import in `tree`, relative ones made absolute."""
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def layer_of(module: str) -> str | None:
    """`cortex`, `services`, `api_request`, `storage`, `routes`… for a module under `src`."""
    parts = module.removeprefix("src.").split(".")
    if parts[0] == "routes":
        return "routes"
    if parts[0] == "utils" and len(parts) > 1:
        return parts[1]
    return None


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """The forbidden `layer → layer` edges of one module's source."""
    here = layer_of(module)
    found = []
    for name in sorted(_imported(ast.parse(source), module, is_package)):
        target = layer_of(name if name.startswith("src.") else f"src.{name}")
        if target in FORBIDDEN.get(here, set()) and name.split(".")[0] in ("src", "utils", "routes"):
            found.append(f"{module} → {name} ({here} → {target})")
    return found


def _modules():
    return sorted(SRC.rglob("*.py"))


def test_the_source_tree_has_the_layers_the_rules_name():
    layers = {layer_of(_module_name(path)) for path in _modules()}
    assert {"cortex", "services", "api_request", "storage", "routes"} <= layers


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_imports_across_a_forbidden_layer_edge(path):
    module = _module_name(path)
    assert violations(path.read_text(encoding="utf-8"), module,
                      path.name == "__init__.py") == []


@pytest.mark.parametrize("source, module, package", [
    ("from ..services import prompt_builder", "src.utils.cortex.update", False),
    ("from ..services.prompt_builder import fence", "src.utils.cortex.update", False),
    ("def f():\n    from ...routes import errors", "src.utils.cortex.update", False),
    ("from src.utils.services import ids", "src.utils.cortex.paths", False),
    ("import utils.services.ids", "src.utils.cortex.paths", False),
    ("from ..storage import db", "src.utils.api_request.client", False),
    ("from ..cortex import tools", "src.utils.api_request", True),
    ("from ...routes.errors import ApiError", "src.utils.services.chat_service", False),
    ("from .. import services", "src.utils.cortex.update", False),
])
def test_the_walk_catches_each_kind_of_forbidden_import(source, module, package):
    assert violations(source, module, package)


@pytest.mark.parametrize("source, module", [
    ("from .. import prompts", "src.utils.cortex.update"),
    ("from ..storage.personas import get_persona", "src.utils.cortex.update"),
    ("from ..cortex import tools", "src.utils.services.chat_service"),
    ("from ..api_request.types import RequestConfig", "src.utils.cortex.update"),
    ("import anthropic", "src.utils.api_request.sdk"),
])
def test_the_walk_allows_the_downward_edges(source, module):
    assert violations(source, module) == []


SDKS = ("anthropic", "openai")


def sdk_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Imports of a provider SDK (anthropic, openai) by a module outside `api_request`."""
    if layer_of(module) == "api_request":
        return []
    return sorted(name for name in _imported(ast.parse(source), module, is_package)
                  if name.split(".")[0] in SDKS)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_only_api_request_imports_a_provider_sdk(path):
    assert sdk_imports(path.read_text(encoding="utf-8"), _module_name(path),
                       path.name == "__init__.py") == []


@pytest.mark.parametrize("source, module, expected", [
    ("import openai", "src.utils.services.chat_service", ["openai"]),
    ("from openai import OpenAI", "src.utils.cortex.update", ["openai", "openai.OpenAI"]),
    ("def f():\n    import anthropic", "src.routes.settings", ["anthropic"]),
    ("import openai as sdk", "src.utils.api_request.openai_sdk", []),
    ("from ..api_request.openai import usage_dict", "src.utils.services.chat_service", []),
])
def test_the_sdk_walk_sees_each_kind_of_import(source, module, expected):
    assert sdk_imports(source, module) == expected
