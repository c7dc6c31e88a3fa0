"""Routes: settings (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("settings", __name__)
