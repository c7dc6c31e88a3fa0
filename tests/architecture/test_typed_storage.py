"""Storage returns typed resources (issue 22, DESIGN §15): the public functions of the store
modules converted so far are annotated, and none of them answers with a bare `dict` (nor a list
or an Optional of one). Read through `typing.get_type_hints`, so an annotation that names a
model which no longer exists fails too.

Messages are `Message` models; the prompt's history on the chat hot path is light but typed
(`HistoryMessage` tuples; docs/development.md, "Typed resources").
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
    # The API reads jobs through find_job and resource_of; the runner (queue, claim, lease,
    # finish, its notifications, the retry of an interrupted job) reads rows as dicts.
    "src.utils.storage.cortex_jobs": {
        **dict.fromkeys(("enqueue_job", "claim_next_job", "finish_job", "note_reconciled",
                         "get_job", "finished_since", "active_jobs", "last_finished_job",
                         "retry_interrupted"),
                        "the runner's rows"),
        "last_consolidation": "the sleep status's `last_consolidation`, an open object",
    },
    # The chat turn's write side answers the RETURNING row it wrote (the turn reads its id
    # and text); every read answers a `Message`, the prompt's history `HistoryMessage`s.
    "src.utils.storage.messages": {
        **dict.fromkeys(("add_message", "finish_reply"), "the chat turn's written row"),
        "reply_marks": "reply id → the mark another process left, not a resource",
    },
    "src.utils.storage.exchanges": {},
    "src.utils.storage.tree": {"siblings": "children ids per parent id, not a resource"},
    "src.utils.storage.search": {},
}


def _public_functions(module: types.ModuleType) -> list:
    return [value for name, value in vars(module).items()
            if inspect.isfunction(value) and not name.startswith("_")
            and value.__module__ == module.__name__]


def _holds_dict(hint: object) -> bool:
    """True when `hint` is `dict`, `dict[...]` or a union, list or tuple with one inside."""
    if hint is dict or typing.get_origin(hint) is dict:
        return True
    return any(_holds_dict(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_converted_stores_return_models_not_dicts(name):
    module = importlib.import_module(name)
    allowed = CONVERTED[name]
    found = []
    for function in _public_functions(module):
        hints = typing.get_type_hints(function)
        if "return" not in hints:
            found.append(f"{function.__name__}: no return annotation")
        elif _holds_dict(hints["return"]) and function.__name__ not in allowed:
            found.append(f"{function.__name__} -> {hints['return']}")
    assert not found, f"{name} returns bare dicts: {found}"
    assert set(allowed) <= {f.__name__ for f in _public_functions(module)}, "stale exemption"


def test_the_check_sees_a_dict_inside_a_union_or_list():
    assert _holds_dict(dict) and _holds_dict(dict[str, int] | None)
    assert _holds_dict(list[dict]) and _holds_dict(tuple[dict, bool])
    assert not _holds_dict(list[int] | None) and not _holds_dict(bool)
