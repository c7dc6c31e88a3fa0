"""The layers as drawn: an AST walk over every module's imports fails on an upward edge.

`cortex/` (memory) never reaches into `services/` (conversation); `api_request/` (the provider
boundary) knows nothing of the app; neither services nor cortex know the Flask routes; `storage/`
(all the SQL) knows none of them; routes reach services only (no `storage`, no `get_db()`). No
two modules import each other, however indirectly. Imports inside functions count too, and
relative imports are resolved against the importing module.
"""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
FORBIDDEN = {
    "cortex": {"services", "routes"},
    "services": {"routes"},
    "api_request": {"cortex", "services", "routes", "storage"},
    "storage": {"cortex", "services", "routes", "api_request", "portability", "openapi"},
    "routes": {"storage"},
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


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """`{module: modules it imports}` over every module under `root` (named as under `src`).

    `from package import name` points at `package.name` when that is a module, else at the
    package itself; `import a.b.c` at the longest prefix that is a module.
    """
    paths = {_module_name_under(root, path): path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = _edges(tree, module, path.name == "__init__.py", set(paths)) - {module}
    return graph


def _module_name_under(root: Path, path: Path) -> str:
    parts = ["src", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(_longest_module(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                name = f"{base}.{alias.name}"
                found.add(name if name in modules else _longest_module(base, modules))
    return found - {None}


def _longest_module(name: str, modules: set[str]) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each an import circle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(graph.get(target, ())))))
            elif target in on_stack:
                low[node] = min(low[node], index[target])

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def test_no_import_circle_between_modules():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_the_circle_search_finds_each_circle(graph, expected):
    assert cycles(graph) == expected


def test_function_local_and_relative_imports_make_edges():
    tree = ast.parse("from . import b\ndef f():\n    from .c import x\n    import src.d.e")
    modules = {"src.a", "src.b", "src.c", "src.d"}
    assert _edges(tree, "src.a", False, modules) == {"src.b", "src.c", "src.d"}


def get_db_uses(source: str, module: str) -> list[str]:
    """`module:function` for each function of a route module that names `get_db` (a call, or
    `provider.get_db`), and `module:import` for an import of it: routes reach data through
    services only."""
    tree = ast.parse(source)
    found = [f"{module}:import" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and any(alias.name == "get_db" for alias in node.names)]
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        names = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)} | \
            {node.attr for node in ast.walk(function) if isinstance(node, ast.Attribute)}
        if "get_db" in names:
            found.append(f"{module}:{function.name}")
    return found


@pytest.mark.parametrize("path", sorted((SRC / "routes").glob("*.py")),
                         ids=lambda p: p.name)
def test_routes_call_no_get_db(path):
    assert get_db_uses(path.read_text(encoding="utf-8"), _module_name(path)) == []


@pytest.mark.parametrize("source, expected", [
    ("def view():\n    return get_db().conn()", ["src.routes.x:view"]),
    ("def view():\n    provider.get_db().close_thread()", ["src.routes.x:view"]),
    ("def view():\n    return get_cortex_service()", []),
    ("from ..utils.provider import get_cortex_service, get_db", ["src.routes.x:import"]),
])
def test_the_get_db_walk_sees_each_kind_of_use(source, expected):
    assert get_db_uses(source, "src.routes.x") == expected


@pytest.mark.parametrize("source", [
    "from ..utils.storage import db",
    "from ..utils.storage.messages import get_message",
    "def view():\n    from ..utils import storage",
])
def test_the_walk_catches_a_route_importing_storage(source):
    assert violations(source, "src.routes.cortex")


SQL_CALLS = ("execute", "executemany", "executescript")


def sql_calls(source: str) -> list[int]:
    """Lines of `x.execute(…)` (or executemany/executescript) calls whose statement is text:
    a string, an f-string, a concatenation, or a name holding one."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in SQL_CALLS and node.args \
                and isinstance(node.args[0], ast.Constant | ast.JoinedStr | ast.BinOp | ast.Name) \
                and not (isinstance(node.args[0], ast.Constant)
                         and not isinstance(node.args[0].value, str)):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", [p for p in _modules() if layer_of(_module_name(p)) != "storage"],
                         ids=lambda p: str(p.relative_to(SRC)))
def test_sql_runs_only_in_storage(path):
    assert sql_calls(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source, expected", [
    ('conn.execute("SELECT 1")', [1]),
    ('conn.executemany(f"UPDATE t SET a = {x}", rows)', [1]),
    ('self._db.conn().execute("SELECT " + columns)', [1]),
    ("cursor = conn.execute(sql, (persona_id,))", [1]),
    ("results = self.execute(answer.calls)", []),
    ("results = loop.execute(calls or [])", []),
])
def test_the_sql_walk_sees_each_kind_of_statement(source, expected):
    assert sql_calls(source) == expected
