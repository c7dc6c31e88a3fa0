"""Seed 000 §11, as the seed wrote them: `from utils.api_request.client import ApiClient,
MAX_TOOL_ROUNDS` with `src/` on `sys.path`, the SDK replaced through the module attribute
`utils.api_request.client.anthropic`, responses as plain attribute objects.

Our contract differs from the seed's in one place, on purpose: `error` is the stable §4 code and
the human text is in `error_message` (the seed put `str(exception)` into `error`).
"""
import httpx2
import pytest

import utils.api_request.client as client_module
from tests.seed.sdk_stub import StubSdk, response, text_block, tool_block
from utils.api_request.client import MAX_TOOL_ROUNDS, ApiClient, ToolExecutor
from utils.api_request.types import RequestConfig

KEY = "sk-ant-seed-0123456789abcdef"
TOOLS = [
    {"name": "read_file", "description": "Reads a cortex file.",
     "input_schema": {"type": "object", "properties": {"filename": {"type": "string"}},
                      "required": ["filename"]}},
    {"name": "write_file", "description": "Writes a cortex file.",
     "input_schema": {"type": "object", "properties": {"filename": {"type": "string"},
                                                       "content": {"type": "string"}},
                      "required": ["filename", "content"]}},
]
FILES = {"memory.md": "# Erinnerungen\n"}


@pytest.fixture
def sdk(monkeypatch):
    """The stub SDK, installed as `utils.api_request.client.anthropic` (seed 000's seam)."""
    stub = StubSdk()
    monkeypatch.setattr(client_module, "anthropic", stub)
    return stub


@pytest.fixture
def api(sdk):
    """`ApiClient(api_key=...)`, built through the stub."""
    client = ApiClient(api_key=KEY)
    yield client
    client.close()


def _config(tools=TOOLS) -> RequestConfig:
    return RequestConfig(system_prompt="Du bist Mira.", model="claude-test",
                         messages=[{"role": "user", "content": "Aktualisiere dein Gedächtnis."}],
                         max_tokens=500, request_type="cortex_update", tools=tools)


def executor(name: str, tool_input: dict) -> tuple[bool, str]:
    """The seed's example executor: read_file and write_file on a dict."""
    if name == "read_file":
        return True, FILES.get(tool_input["filename"], "")
    if name == "write_file":
        FILES[tool_input["filename"]] = tool_input["content"]
        return True, "Datei erfolgreich geschrieben."
    return False, f"Unbekanntes Tool: {name}"


def _tool_results(call: dict) -> list[dict]:
    return call["messages"][-1]["content"]


def test_the_sdk_client_is_built_through_the_module_attribute(sdk, api):
    assert api.client is sdk.clients[0]
    assert api.client.options["api_key"] == KEY
    assert api.is_ready
    typed: ToolExecutor = executor
    assert callable(typed) and MAX_TOOL_ROUNDS == 10


def test_tool_request_single_round(sdk, api):
    sdk.replies += [
        response(text_block("Ich lese."), tool_block("read_file", {"filename": "memory.md"},
                                                     "toolu_1"), stop_reason="tool_use"),
        response(text_block("Fertig."))]
    result = api.tool_request(_config(), executor)
    assert result.success and result.content == "Fertig." and result.stop_reason == "end_turn"
    assert [r["tool_name"] for r in result.tool_results] == ["read_file"]
    assert result.tool_results[0] == {"round": 1, "tool_name": "read_file",
                                      "tool_input": {"filename": "memory.md"},
                                      "tool_use_id": "toolu_1", "success": True,
                                      "result": "# Erinnerungen\n"}
    first, second = sdk.calls
    assert first["tools"] == TOOLS and first["model"] == "claude-test"
    assert second["messages"][-2]["content"][1] == {
        "type": "tool_use", "id": "toolu_1", "name": "read_file",
        "input": {"filename": "memory.md"}}
    assert _tool_results(second) == [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "# Erinnerungen\n"}]


def test_tool_request_multi_round(sdk, api):
    sdk.replies += [
        response(tool_block("read_file", {"filename": "memory.md"}, "toolu_1"),
                 stop_reason="tool_use"),
        response(tool_block("write_file", {"filename": "memory.md", "content": "# Neu\n"},
                            "toolu_2"), stop_reason="tool_use"),
        response(text_block("Gespeichert."))]
    result = api.tool_request(_config(), executor)
    assert result.success and result.content == "Gespeichert."
    assert [(r["round"], r["tool_name"]) for r in result.tool_results] == [
        (1, "read_file"), (2, "write_file")]
    assert FILES["memory.md"] == "# Neu\n"
    assert len(sdk.calls) == 3 and len(sdk.calls[2]["messages"]) == 5


def test_read_then_write_asks_the_executor_for_a_tool_it_did_not_offer(sdk, api):
    """Seed 000: the executor decides which tools exist. `write_file` is not in `config.tools`
    here, yet the model's call to it reaches the executor (which answers `(False, ...)` itself
    for names it does not know); only our own ToolHandler refuses unregistered names."""
    asked = []

    def recording(name, tool_input):
        asked.append(name)
        return executor(name, tool_input)

    sdk.replies += [
        response(tool_block("read_file", {"filename": "memory.md"}, "toolu_r1"),
                 stop_reason="tool_use"),
        response(tool_block("write_file", {"filename": "memory.md", "content": "Neu"},
                            "toolu_w1"), stop_reason="tool_use"),
        response(tool_block("delete_file", {"filename": "memory.md"}, "toolu_d1"),
                 stop_reason="tool_use"),
        response(text_block("Aktualisierung abgeschlossen."))]
    result = api.tool_request(_config(tools=TOOLS[:1]), recording)
    assert result.success and asked == ["read_file", "write_file", "delete_file"]
    assert [(r["tool_name"], r["success"]) for r in result.tool_results] == [
        ("read_file", True), ("write_file", True), ("delete_file", False)]
    assert FILES["memory.md"] == "Neu"
    assert _tool_results(sdk.calls[3]) == [{"type": "tool_result", "tool_use_id": "toolu_d1",
                                           "content": "Unbekanntes Tool: delete_file",
                                           "is_error": True}]


def test_tool_request_no_tools_error(sdk, api):
    result = api.tool_request(_config(tools=None), executor)
    assert not result.success and result.error == "invalid_request"
    assert "tools" in result.error_message
    assert sdk.calls == []


def test_tool_request_without_a_key_or_with_empty_tools_is_a_stable_code(sdk):
    """Where the seed's tests look for German text in `error` ("nicht initialisiert",
    "tool_request()"), ours find the stable code (DESIGN §4) and the text in `error_message`."""
    asked = []
    with ApiClient(api_key="") as keyless, ApiClient(api_key=KEY) as keyed:
        missing_key = keyless.tool_request(_config(), lambda *call: asked.append(call))
        empty_tools = keyed.tool_request(_config(tools=[]), lambda *call: asked.append(call))
    assert (missing_key.success, missing_key.error) == (False, "not_configured")
    assert (empty_tools.success, empty_tools.error) == (False, "invalid_request")
    assert "tool_request()" in empty_tools.error_message
    assert asked == [] and sdk.calls == []


def test_tool_request_executor_exception(sdk, api):
    def exploding(name, tool_input):
        raise RuntimeError("Platte voll")

    sdk.replies += [
        response(tool_block("write_file", {"filename": "memory.md", "content": "x"}, "toolu_1"),
                 stop_reason="tool_use"),
        response(text_block("Dann eben nicht."))]
    result = api.tool_request(_config(), exploding)
    assert result.success and result.content == "Dann eben nicht."
    block = _tool_results(sdk.calls[1])[0]
    assert block["is_error"] is True and "Platte voll" in block["content"]
    assert result.tool_results[0]["success"] is False


def test_tool_request_executor_failure(sdk, api):
    sdk.replies += [
        response(tool_block("read_file", {"filename": "notes.md"}, "toolu_1"),
                 stop_reason="tool_use"),
        response(text_block("Verstanden."))]
    result = api.tool_request(_config(), lambda name, tool_input: (False, "Ungültiger Name."))
    assert result.success
    assert _tool_results(sdk.calls[1]) == [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "Ungültiger Name.", "is_error": True}]


def test_tool_request_max_rounds(sdk, api):
    sdk.replies += [response(text_block(f"Runde {n}"),
                             tool_block("read_file", {"filename": "memory.md"}, f"toolu_{n}"),
                             stop_reason="tool_use") for n in range(MAX_TOOL_ROUNDS)]
    result = api.tool_request(_config(), executor)
    assert result.success and result.stop_reason == "max_tool_rounds"
    assert len(sdk.calls) == MAX_TOOL_ROUNDS == len(result.tool_results)
    assert result.content == f"Runde {MAX_TOOL_ROUNDS - 1}"


def _status_error(status: int, error_type: str, message: str):
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return client_module.anthropic.APIStatusError(
        message, response=httpx2.Response(status, request=request, json=body), body=body)


def test_tool_request_api_error(sdk, api):
    sdk.replies.append(_status_error(500, "api_error", "Internal server error"))
    result = api.tool_request(_config(), executor)
    assert not result.success and result.error == "api_error" and result.retryable
    assert result.error_message == "Claude's API had an internal error: try again."
    sdk.replies.append(client_module.anthropic.APIError(
        "boom", httpx2.Request("POST", "https://x"), body=None))
    assert api.tool_request(_config(), executor).error == "api_error"


def test_tool_request_credit_exhausted(sdk, api):
    sdk.replies.append(_status_error(
        400, "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API."))
    result = api.tool_request(_config(), executor)
    assert not result.success and result.error == "credit_balance_exhausted"
    assert "credit balance" in result.error_message
    sdk.replies.append(client_module.anthropic.APIError(
        "Your credit balance is too low", httpx2.Request("POST", "https://x"), body=None))
    assert api.tool_request(_config(), executor).error == "credit_balance_exhausted"


def test_tool_request_usage_accumulation(sdk, api):
    sdk.replies += [
        response(tool_block("read_file", {"filename": "memory.md"}, "toolu_1"),
                 stop_reason="tool_use", input_tokens=100, output_tokens=20),
        response(tool_block("read_file", {"filename": "memory.md"}, "toolu_2"),
                 stop_reason="tool_use", input_tokens=150, output_tokens=30),
        response(text_block("Ende."), input_tokens=200, output_tokens=7)]
    result = api.tool_request(_config(), executor)
    assert result.usage == {"input_tokens": 450, "output_tokens": 57}
    assert result.raw_response["usage"] == {"input_tokens": 200, "output_tokens": 7}
    assert result.raw_response["content"] == [{"type": "text", "text": "Ende."}]


def test_extract_text_from_content():
    blocks = [text_block("Erste Zeile"), tool_block("read_file", {}, "toolu_1"),
              text_block("Zweite Zeile")]
    assert ApiClient._extract_text_from_content(blocks) == "Erste Zeile\nZweite Zeile"
    assert ApiClient._extract_text_from_content([tool_block("read_file", {}, "t")]) == ""
    assert ApiClient._extract_text_from_content(None) == ""
    assert ApiClient._extract_text_from_content([]) == ""
    assert ApiClient._extract_text_from_content([{"type": "text", "text": "dict"}]) == "dict"
