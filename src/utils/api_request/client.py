"""PLACEHOLDER: replaced by the full client (issue 2)."""


class ApiClient:
    """Placeholder."""

    def __init__(self, api_key=None, base_url=None, timeout=60.0, max_retries=2,
                 default_model=None):
        self._api_key = api_key

    @property
    def is_ready(self) -> bool:
        return bool(self._api_key)
