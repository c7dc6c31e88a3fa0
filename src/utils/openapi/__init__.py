"""The Open API 3.1 document of the JSON API, assembled from one route table per area.

It is plain data (no Flask): `routes/openapi.py` serves it, and tests check it against
`app.url_map` in both directions and validate real responses against it.
"""
import copy
from functools import lru_cache

from . import access, chat, conversations, cortex, cortex_review, inspector, portability
from . import search, settings, user_personas, world
from .common import INTRO, TAGS
from .table import document

_AREAS = (conversations, chat, cortex, cortex_review, settings, access, portability, search, world,
          user_personas, inspector)


@lru_cache(maxsize=1)
def _document() -> dict:
    routes: dict = {}
    for area in _AREAS:
        for tag, rows in area.ROUTES.items():
            routes[tag] = (*routes.get(tag, ()), *rows)
    return document(routes, INTRO, TAGS)


def build_document() -> dict:
    """The document (a fresh copy: callers may change it freely)."""
    return copy.deepcopy(_document())
