"""Routes: personas (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("personas", __name__)
