"""The only package that talks to the anthropic SDK; callers see our own types."""
from .client import ApiClient

__all__ = ["ApiClient"]
