"""Storage returns typed resources (issue 22, DESIGN §15): the public functions of the store
modules converted so far are annotated, and none of them answers with a bare `dict` (nor a list
or an Optional of one); nor do the public methods of the services over them. Read through
`typing.get_type_hints`, so an annotation that names a model which no longer exists fails too.

Messages are `Message` models; the prompt's history on the chat hot path is light but typed
(`HistoryMessage` tuples; docs/development.md, "Typed resources").
"""
import ast
import importlib
import inspect
import pkgutil
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import src.utils.models as models_package

SRC = Path(__file__).resolve().parents[2] / "src"

# module → public functions that still return a dict, each with why (none is a resource)
CONVERTED: dict[str, dict[str, str]] = {
    "src.utils.storage.sessions": {},
    "src.utils.storage.personas": {},
    "src.utils.storage.cortex_revisions": {},
    "src.utils.storage.proposals": {},
    "src.utils.storage.world_books": {},
    "src.utils.storage.user_personas": {},
    "src.utils.storage.cortex_jobs": {},
    "src.utils.storage.title_jobs": {},
    "src.utils.storage.learn_runs": dict.fromkeys(
        ("imported_sizes", "window_messages"),
        "message rows (sizes, a window's messages), not answers"),
    # The chat turn's write side answers the RETURNING row it wrote (the turn reads its id
    # and text); every read answers a `Message`, the prompt's history `HistoryMessage`s.
    "src.utils.storage.messages": {
        **dict.fromkeys(("add_message", "add_exchange", "finish_reply"),
                        "the chat turn's written row"),
        "reply_marks": "reply id → the mark another process left, not a resource",
    },
    "src.utils.storage.exchanges": {},
    "src.utils.storage.tree": {"siblings": "children ids per parent id, not a resource"},
    "src.utils.storage.search": {},
}


# service class → public methods that still return a dict, each with why
SERVICES: dict[str, dict[str, str]] = {
    "src.utils.services.world_books.WorldBookService": {},
    "src.utils.services.user_personas.UserPersonaService": {
        "avatar": "a picture's bytes and type for avatar_response (the avatars store, shared "
                  "with the personas' portability, returns it so)"},
    "src.utils.services.settings_service.SettingsService": {},
}


def _public_functions(module: types.ModuleType) -> list:
    return [value for name, value in vars(module).items()
            if inspect.isfunction(value) and not name.startswith("_")
            and value.__module__ == module.__name__]


def _public_methods(cls: type) -> list:
    return [value for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(getattr(cls, name))]


def _bare_dicts(functions: list, allowed: dict[str, str]) -> list[str]:
    found = []
    for function in functions:
        function = inspect.unwrap(getattr(function, "__func__", function))
        hints = typing.get_type_hints(function)
        if "return" not in hints:
            found.append(f"{function.__name__}: no return annotation")
        elif _holds_dict(hints["return"]) and function.__name__ not in allowed:
            found.append(f"{function.__name__} -> {hints['return']}")
    return found


def _holds_dict(hint: object) -> bool:
    """True when `hint` is `dict`, `dict[...]` or a union, list or tuple with one inside."""
    if hint is dict or typing.get_origin(hint) is dict:
        return True
    return any(_holds_dict(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_converted_stores_return_models_not_dicts(name):
    module = importlib.import_module(name)
    allowed = CONVERTED[name]
    found = _bare_dicts(_public_functions(module), allowed)
    assert not found, f"{name} returns bare dicts: {found}"
    assert set(allowed) <= {f.__name__ for f in _public_functions(module)}, "stale exemption"


@pytest.mark.parametrize("path", sorted(SERVICES))
def test_services_over_converted_stores_return_models_not_dicts(path):
    module_name, class_name = path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), class_name)
    allowed = SERVICES[path]
    found = _bare_dicts(_public_methods(cls), allowed)
    assert not found, f"{path} returns bare dicts: {found}"
    assert set(allowed) <= {f.__name__ for f in _public_methods(cls)}, "stale exemption"


def test_the_check_sees_a_dict_inside_a_union_or_list():
    assert _holds_dict(dict) and _holds_dict(dict[str, int] | None)
    assert _holds_dict(list[dict]) and _holds_dict(tuple[dict, bool])
    assert not _holds_dict(list[int] | None) and not _holds_dict(bool)


def _model_names() -> dict[str, str]:
    """Every pydantic model defined in `src/utils/models/`, by name → its module."""
    found = {}
    for info in pkgutil.iter_modules(models_package.__path__):
        module = importlib.import_module(f"{models_package.__name__}.{info.name}")
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseModel)
                    and value.__module__ == module.__name__):
                found[name] = module.__name__
    return found


def _definitions(path: Path) -> list[tuple[str, int]]:
    """Names a module defines itself: classes and assignments (a type alias is one), anywhere
    in it (a class nested in a function too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            found.append((node.name, node.lineno))
        elif isinstance(node, ast.Assign):
            found += [(t.id, node.lineno) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            found.append((node.target.id, node.lineno))
    return found


def test_each_resource_has_one_type():
    """A resource is one model (issue 22: "no near-copies"): no module of `src/` defines a
    class or alias of the name of a model in `models/` beside it (the cortex service once kept
    its own `CortexFile` dataclass, and the search models a `CortexFile` literal)."""
    names = _model_names()
    assert "CortexFile" in names and "CortexJob" in names
    copies = []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        for name, line in _definitions(path):
            if name in names and module != names[name]:
                copies.append(f"{module}:{line} defines {name} (the model: {names[name]})")
    assert not copies, copies
