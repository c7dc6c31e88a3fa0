"""Routes: pages (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("pages", __name__)
