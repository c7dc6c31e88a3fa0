"""Fixtures for the API client tests: the real SDK talking to the Claude fake."""
import sys
import threading
import time

import pytest

from src.utils.api_request import ApiClient, RequestConfig, ToolDefinition

KEY = "sk-ant-test-0123456789abcdef"
MODEL = "claude-sonnet-5-5"

READ_FILE = ToolDefinition(
    name="read_file",
    description="Reads the current content of a cortex file.",
    input_schema={"type": "object", "properties": {"filename": {
        "type": "string", "enum": ["memory.md", "soul.md", "relationship.md"]}},
        "required": ["filename"]},
)
WRITE_FILE = ToolDefinition(
    name="write_file",
    description="Replaces the whole content of a cortex file.",
    input_schema={"type": "object", "properties": {
        "filename": {"type": "string", "enum": ["memory.md", "soul.md", "relationship.md"]},
        "content": {"type": "string"}}, "required": ["filename", "content"]},
)
TOOLS = [READ_FILE, WRITE_FILE]


@pytest.fixture
def api(claude):
    """An ApiClient on the fake, without SDK retries (they would only add waiting)."""
    client = ApiClient(api_key=KEY, base_url=claude.url, timeout=5.0, max_retries=0,
                       default_model=MODEL)
    yield client
    client.close()


def user(text="Please update your memory."):
    """A one-message history."""
    return [{"role": "user", "content": text}]


def wait_until(predicate, timeout=20.0, what="condition"):
    """Waits for `predicate()` to hold, failing the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    with threading.Condition() as cond:
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            cond.wait(min(remaining, 0.005))


def blocked_in_socket_read(thread: threading.Thread) -> bool:
    """Whether `thread` is inside the HTTP library's blocking socket read right now."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "read" and "httpcore2" in code.co_filename and "_backends" in code.co_filename:
            return True
        frame = frame.f_back
    return False


def tool_config(**overrides):
    """A cortex-update style request with the two file tools."""
    values = {"system_prompt": "You are the persona.", "messages": user(), "tools": TOOLS,
              "max_tokens": 1000, "request_type": "cortex_update"}
    values.update(overrides)
    return RequestConfig(**values)


class Files:
    """An executor over an in-memory cortex that records every call."""

    def __init__(self, **files):
        self.files = {"memory.md": "# Memory", **files}
        self.calls = []

    def __call__(self, name, arguments):
        self.calls.append((name, arguments))
        if name == "read_file":
            return True, self.files.get(arguments["filename"], "")
        if name != "write_file":
            return False, f"Unknown tool: {name}"  # seed 000: the executor knows its tools
        self.files[arguments["filename"]] = arguments["content"]
        return True, "File written."
