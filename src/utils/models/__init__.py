"""The typed model layer (DESIGN §15): request bodies, settings and resources as pydantic
models, one module per area. The OpenAPI document and the input limits are generated from
them (`src/utils/openapi/`, `src/utils/limits.py`)."""
from .base import Body, Invalid, omittable, parse, rule_error

__all__ = ["Body", "Invalid", "omittable", "parse", "rule_error"]
