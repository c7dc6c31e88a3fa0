"""The Open API 3.1 document of the JSON API, assembled from one route table per area.

It is plain data (no Flask app needed): `routes/openapi.py` serves it, and tests check it
against `app.url_map` in both directions and validate real responses against it.
"""
from . import (
    access,
    chat,
    conversations,
    cortex,
    cortex_review,
    inspector,
    portability,
    search,
    settings,
    user_personas,
    world,
)
from .common import INTRO, TAGS
from .table import document

_AREAS = (conversations, chat, cortex, cortex_review, settings, access, portability, search, world,
          user_personas, inspector)


def build_document() -> dict:
    """The document (a fresh copy: callers may change it freely)."""
    return document(_AREAS, INTRO, TAGS)
