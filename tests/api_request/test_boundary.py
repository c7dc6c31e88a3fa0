"""Only `src/utils/api_request/` may import the anthropic SDK; nothing SDK-typed leaves it."""
import json
import re
from pathlib import Path

from src.utils.api_request import RequestConfig
from tests.api_request.conftest import user
from tests.fakes.claude import replies

SRC = Path(__file__).resolve().parents[2] / "src"
IMPORT = re.compile(r"^\s*(import anthropic|from anthropic\b)", re.MULTILINE)


def test_no_module_outside_the_package_imports_the_sdk():
    offenders = [str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                 if "api_request" not in path.parts and IMPORT.search(path.read_text("utf-8"))]
    assert offenders == []


def test_results_are_plain_data(api, claude):
    claude.default = replies.text("Plain.")
    config = RequestConfig(system_prompt="s", messages=user())

    result = api.request(config)
    events = list(api.stream(config))

    assert isinstance(result.raw_response, dict)
    assert all(type(event.data) in (str, dict) for event in events)
    assert type(events[-1].data["usage"]) is dict


def test_openai_results_are_plain_data(openai_fake):
    from src.utils.api_request import ApiClient, Connection

    openai_fake.default = replies.text("Plain.")
    connection = Connection("openai_compatible", openai_fake.url)
    config = RequestConfig(system_prompt="s", messages=user())
    with ApiClient(connection_source=lambda: connection, max_retries=0,
                   default_model="llama3.2:3b") as api:
        result = api.request(config)
        events = list(api.stream(config))
    assert isinstance(result.raw_response, dict)
    assert json.loads(json.dumps(result.raw_response)) == result.raw_response
    assert all(type(event.data) in (str, dict) for event in events)
    assert type(events[-1].data["usage"]) is dict
