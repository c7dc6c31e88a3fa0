"""The base of every request body and settings model, and the one place a pydantic error
becomes our `{"error": {"code": "validation_error", "message", "field"}}` (`Invalid`).

Bodies are strict (a JSON `"1"` is not an integer, `1.0` not an integer, `true` not a
number) and forbid unknown keys, so the JSON schema pydantic writes for the OpenAPI document
is exactly what the server accepts. Messages keep the wording the hand validators had:
`field: rule`, the rule derived from the field's constraints unless the model names one.
Imports nothing of ours: every layer may use it (routes/errors.py renders `Invalid`).
"""
import types
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

M = TypeVar("M", bound="Body")
KEY_SHOWN = 80  # characters of an unknown key a refusal names


class Invalid(ValueError):
    """A body or setting broke a rule: a 400 with `code`, `message` and `field`."""

    def __init__(self, code: str, message: str, field: str):
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


def rule_error(rule: str) -> PydanticCustomError:
    """A validator's refusal whose text is the rule itself (`field: <rule>`)."""
    return PydanticCustomError("rule", rule)


def omittable(*, schema: dict[str, Any] | None = None, **constraints: Any) -> Any:
    """A field a partial update may leave out (its value is then unset, see `Body.given`);
    JSON null is accepted only if the type allows it. `schema`: extra JSON schema keys."""

    def extra(field_schema: dict[str, Any]) -> None:
        field_schema.pop("default", None)
        field_schema.update(schema or {})

    return Field(None, json_schema_extra=extra, **constraints)


class Body(BaseModel):
    """A JSON object the API accepts: strict types, no unknown keys, readable refusals.

    `rules` overrides the rule text of a field; `error_code` and `message_format` let an area
    keep its own error shape (the cortex settings answer `invalid_setting`).
    """

    model_config = ConfigDict(extra="forbid", strict=True)
    rules: ClassVar[dict[str, str]] = {}
    error_code: ClassVar[str] = "validation_error"
    message_format: ClassVar[str] = "{field}: {rule}"
    unknown_format: ClassVar[str] = "{field}: unknown field; allowed: {allowed}"

    def given(self) -> dict[str, Any]:
        """Only the fields the request named (a partial update's changes)."""
        return self.model_dump(exclude_unset=True)


def parse(model: type[M], data: Any) -> M:
    """`data` (decoded JSON) as `model`, or a 400 naming the first field at fault (unknown
    keys first, then the fields in the order the request gave them)."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise _refusal(model, data, err.errors()) from None


def _refusal(model: type[Body], data: Any, errors: list) -> Invalid:
    order = list(data) if isinstance(data, dict) else []
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    if unknown:
        field = _named(str(unknown[0]["loc"][0]))
        allowed = ", ".join(sorted(model.model_fields))
        message = model.unknown_format.format(field=field, allowed=allowed)
        return Invalid("unknown_field" if model.error_code == "validation_error"
                            else model.error_code, message, field)
    first = min(errors, key=lambda e: order.index(e["loc"][0])
                if e["loc"] and e["loc"][0] in order else len(order))
    field = str(first["loc"][0]) if first["loc"] else ""
    info = model.model_fields.get(field)
    rule = model.rules.get(field) or _rule(info, first)
    return Invalid(model.error_code, model.message_format.format(field=field, rule=rule), field)


def _named(key: str) -> str:
    """An unknown key as the refusal names it: cut at `KEY_SHOWN` characters, so a key of
    megabytes is not echoed back twice (in `field` and in the message)."""
    return key if len(key) <= KEY_SHOWN else key[:KEY_SHOWN] + "…"


def _rule(info: FieldInfo | None, error: dict) -> str:
    """The rule a field broke, in the words the hand validators used."""
    kind = error["type"]
    if kind == "rule":
        return str(error["msg"])
    if kind == "missing":
        return "is required"
    bounds = bounds_of(info)
    if kind in ("string_too_long", "string_too_short") or (kind == "string_type" and not bounds):
        low, high = bounds.get("min_length", 0), bounds.get("max_length")
        if kind == "string_type":
            return "must be a string"
        if high is None:
            return f"must be at least {low} characters long"
        return (f"must not be longer than {high} characters" if low == 0
                else f"must be {low} to {high} characters long")
    if kind.startswith("int") or kind in ("greater_than_equal", "less_than_equal"):
        return f"must be an integer from {bounds.get('ge')} to {bounds.get('le')}"
    if kind == "literal_error" or (kind.endswith("_type") and _options(info)):
        shown = ", ".join("null" if o is None else f'"{o}"' for o in _options(info))
        return f"must be one of {shown}"
    if kind == "bool_type":
        return "must be true or false"
    return str(error["msg"]).lower()


def _options(info: FieldInfo | None) -> list:
    """The values a `Literal` field (optionally `| None`) allows, in declared order."""
    annotation = info.annotation if info is not None else None
    if get_origin(annotation) in (Union, types.UnionType):
        return [o for arg in get_args(annotation) for o in
                (get_args(arg) if get_origin(arg) is Literal else [None])]
    return list(get_args(annotation)) if get_origin(annotation) is Literal else []


def bounds_of(info: FieldInfo | None) -> dict[str, Any]:
    """The length and range constraints of a field (`max_length`, `ge`, …)."""
    found: dict[str, Any] = {}
    for item in info.metadata if info is not None else ():
        for name in ("min_length", "max_length", "ge", "le"):
            if getattr(item, name, None) is not None:
                found[name] = getattr(item, name)
    return found
