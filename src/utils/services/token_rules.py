"""The rule an access token must meet before the app starts with it (README/docs, Security).

After trimming surrounding whitespace (the trimmed value is the token): at least 16 characters,
at least 8 different characters, no character making up more than a third of it, and not a
straight run such as `abcdefghijklmnop`. A random token passes: generate one with
`python -c "import secrets; print(secrets.token_urlsafe(24))"`.
"""
import itertools
from collections import Counter

MIN_LENGTH = 16
MIN_DISTINCT = 8
MAX_SHARE = 1 / 3
HINT = ('Generate one with: python -c "import secrets; print(secrets.token_urlsafe(24))"')


class WeakToken(ValueError):
    """The configured access token does not meet the rule; the message says which part."""


def checked_token(raw: str | None) -> str | None:
    """The trimmed token (None when none is configured); raises WeakToken if it is weak."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise WeakToken("PERSONA_ACCESS_TOKEN must be text.")
    token = raw.strip()
    problem = _problem(token)
    if problem:
        raise WeakToken(f"PERSONA_ACCESS_TOKEN {problem}, so the app will not start. {HINT}")
    return token


def _problem(token: str) -> str | None:
    if len(token) < MIN_LENGTH:
        return f"has {len(token)} characters after trimming; at least {MIN_LENGTH} are needed"
    counts = Counter(token)
    if len(counts) < MIN_DISTINCT:
        return f"uses only {len(counts)} different characters; at least {MIN_DISTINCT} are needed"
    if max(counts.values()) > len(token) * MAX_SHARE:
        return "repeats one character too often (more than a third of it)"
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(token)}
    if len(steps) == 1:
        return "is a straight run of characters (like abcdefgh...)"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in token):
        return "contains control characters"
    return None
