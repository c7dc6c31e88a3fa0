"""Routes: cortex (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("cortex", __name__)
