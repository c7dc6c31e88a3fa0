"""Storage returns typed resources (issue 22, DESIGN §15): the public functions of the store
modules converted so far are annotated, and none of them answers with a bare `dict` (nor a list
or an Optional of one); nor do the public methods of the services over them. Read through
`typing.get_type_hints`, so an annotation that names a model which no longer exists fails too.

Rows of the chat hot path (messages, history) stay light on purpose: their modules are not
listed (docs/development.md, "Typed resources").
"""
import importlib
import inspect
import types
import typing

import pytest

# module → public functions that still return a dict, each with why (none is a resource)
CONVERTED: dict[str, dict[str, str]] = {
    "src.utils.storage.sessions": {},
    "src.utils.storage.personas": {},
    "src.utils.storage.cortex_revisions": {},
    "src.utils.storage.proposals": {},
    "src.utils.storage.world_books": {},
    "src.utils.storage.user_personas": {},
    # The API reads jobs through find_job and resource_of; the runner (queue, claim, lease,
    # finish, its notifications, the retry of an interrupted job) reads rows as dicts.
    "src.utils.storage.cortex_jobs": {
        **dict.fromkeys(("enqueue_job", "claim_next_job", "finish_job", "note_reconciled",
                         "get_job", "finished_since", "active_jobs", "last_finished_job",
                         "retry_interrupted"),
                        "the runner's rows"),
        "last_consolidation": "the sleep status's `last_consolidation`, an open object",
    },
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
