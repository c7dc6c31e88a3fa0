"""The Open API 3.1 document of the JSON API, assembled from one route table per area.

Every module of this package but `common` and `table` is an area with a `ROUTES` table; a new
area is a new module. It needs no running app: `routes/openapi.py` serves it, and tests check it
against `app.url_map` in both directions and validate real responses against it.
"""
import pkgutil
from importlib import import_module

from .common import INFO, TAGS
from .table import document

_AREAS = tuple(import_module(f"{__name__}.{area.name}") for area in pkgutil.iter_modules(__path__)
               if area.name not in ("common", "table"))


def build_document() -> dict:
    """The document (a fresh copy: callers may change it freely)."""
    return document(_AREAS, INFO, TAGS)
