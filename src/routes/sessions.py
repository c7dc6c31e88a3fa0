"""Routes: sessions (placeholder blueprint, filled in by its feature)."""
from flask import Blueprint

bp = Blueprint("sessions", __name__)
