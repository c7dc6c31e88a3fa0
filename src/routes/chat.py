"""Routes: chat (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("chat", __name__)
