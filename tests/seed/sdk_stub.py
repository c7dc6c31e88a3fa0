"""A stand-in for the `anthropic` module as seen from `utils.api_request.client` (seed 000, §11).

This is the one sanctioned place where the SDK is replaced: seed 000 documents the module
attribute `client.anthropic` as its seam, and these tests pin that surface. Every behaviour test
of the client also runs against the real SDK and the HTTP fake (tests/api_request/).
Responses are plain attribute objects, as the seed's tests build them.
"""
import copy
from types import SimpleNamespace

import anthropic


def text_block(text: str) -> SimpleNamespace:
    """A `text` content block."""
    return SimpleNamespace(type="text", text=text)


def tool_block(name: str, tool_input: dict, block_id: str) -> SimpleNamespace:
    """A `tool_use` content block."""
    return SimpleNamespace(type="tool_use", id=block_id, name=name, input=tool_input)


def response(*blocks, stop_reason: str = "end_turn", input_tokens: int = 10,
             output_tokens: int = 5) -> SimpleNamespace:
    """A Messages API response with `input_tokens`/`output_tokens` usage."""
    return SimpleNamespace(content=list(blocks), stop_reason=stop_reason,
                           usage=SimpleNamespace(input_tokens=input_tokens,
                                                 output_tokens=output_tokens))


class StubSdk:
    """Replaces the module: `Anthropic(...)` builds a `StubClient`; exception classes stay real."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.clients: list[StubClient] = []

    @property
    def Anthropic(self):
        def build(**options):
            client = StubClient(self, options)
            self.clients.append(client)
            return client
        return build

    def __getattr__(self, name):
        return getattr(anthropic, name)

    @property
    def calls(self) -> list[dict]:
        """Every `messages.create` call's keyword arguments, copied when made, in order."""
        return [call for client in self.clients for call in client.calls]


class StubClient:
    """An SDK client whose `messages.create` answers from the script (a reply may be an error)."""

    def __init__(self, sdk: StubSdk, options: dict):
        self.options = options
        self.calls: list[dict] = []
        self.messages = SimpleNamespace(create=self._create)
        self._sdk = sdk

    def _create(self, **kwargs):
        self.calls.append(copy.deepcopy(kwargs))
        if not self._sdk.replies:
            raise AssertionError("the stub has no reply left")
        reply = self._sdk.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def close(self) -> None:
        """Nothing to release."""
