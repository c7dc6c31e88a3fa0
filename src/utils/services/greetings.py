"""The greeting a session opens with: the persona's main greeting or one of its alternates.

Index 0 is `greeting` (a card's `first_mes`), n is `alternate_greetings[n-1]`, as SPEC_V3's
`@@is_greeting` numbers them. A session's choice is free until its first message; after that it
is fixed, because the prompt must hold the greeting the person saw.
"""
from ..models.personas import Persona
from .errors import ServiceError, invalid


def count(persona: Persona) -> int:
    """How many greetings the persona offers (the main one counts even when empty)."""
    return 1 + len(persona.alternate_greetings)


def check_index(persona: Persona, value: object) -> int:
    """`value` if it names one of the persona's greetings; 400 otherwise."""
    last = count(persona) - 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= last:
        raise invalid("greeting_index", f"must be an integer from 0 to {last}")
    return value


def greeting_for(persona: Persona, index: int) -> str:
    """The text of greeting `index` (the main one when the index is out of range)."""
    alternates = persona.alternate_greetings
    if 1 <= index <= len(alternates):
        return alternates[index - 1]
    return persona.greeting


def started() -> ServiceError:
    """409: the greeting cannot change once the conversation has begun."""
    return ServiceError(409, "conversation_started",
                        "The greeting can only be chosen before the first message.")
