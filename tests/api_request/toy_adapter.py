"""A third provider in one file: the toy JSON-lines protocol of tests/fakes/jsonl.py as a
`ProviderAdapter`. The engine's tool loop and stream runner run it unchanged
(tests/api_request/test_engine.py); nothing in `src/` knows it exists."""
import json
from collections.abc import Iterator
from typing import Any

import httpx2

from src.utils.api_request.adapter import Delta, LoopView, Round
from src.utils.api_request.errors import ApiFailure
from src.utils.api_request.sdk import abort_connection
from src.utils.api_request.types import (
    ApiResponse,
    RequestConfig,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
)

RETRYABLE = {"timeout", "connection_error", "overloaded", "rate_limited", "api_error"}
CODES = {"overloaded_error": "overloaded", "rate_limit_error": "rate_limited",
         "invalid_request_error": "invalid_request", "api_error": "api_error"}


class ToyError(Exception):
    """An error the toy server reported (its code and message)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = CODES.get(code, code)


class ToyAdapter:
    """The toy protocol over httpx2 (one client; `close()` releases it)."""

    secret: str | None = None

    def __init__(self, url: str, timeout: float = 5.0):
        self.url, self.timeout = f"{url}/toy", timeout
        self._http = httpx2.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def body(self, config: RequestConfig, model: str,
             tools: list[ToolDefinition | dict] | None) -> dict:
        system = config.system_prompt if isinstance(config.system_prompt, str) else \
            "\n\n".join(block.text for block in config.system_prompt)
        return {"model": model, "system": system, "limit": config.max_tokens,
                "messages": [{"role": m["role"], "text": m["content"]} for m in config.messages],
                "tools": [{"name": t.name, "description": t.description, "schema": t.input_schema}
                          for t in tools or () if isinstance(t, ToolDefinition)]}

    def complete(self, body: dict, max_tokens: int) -> Round:
        response = self._http.post(self.url, json={**body, "limit": max_tokens})
        data = _checked(response).json()
        calls = [ToolCall(call["id"], call["name"], call["args"]) for call in data["calls"]]
        return Round(data["text"], calls, data["stop"], _usage(data["usage"]), data, data)

    def open_stream(self, body: dict) -> "_Lines":
        request = self._http.build_request("POST", self.url, json={**body, "stream": True})
        response = self._http.send(request, stream=True)
        if response.status_code != 200:
            response.read()
            response.close()
            _checked(response)
        return _Lines(response)

    def translator(self) -> "_Translation":
        return _Translation()

    def append_round(self, body: dict, answer: Round, results: list[ToolResult]) -> None:
        calls = [{"id": c.id, "name": c.name, "args": c.arguments} for c in answer.calls]
        body["messages"] += [{"role": "assistant", "text": answer.text, "calls": calls}]
        body["messages"] += [{"role": "tool", "id": r.tool_call_id, "result": r.content,
                              "error": r.is_error} for r in results]

    def failure(self, exc: BaseException) -> ApiFailure:
        if isinstance(exc, ToyError):
            return self.problem(exc.code, str(exc))
        if isinstance(exc, httpx2.TimeoutException):
            return self.problem("timeout")
        if isinstance(exc, (httpx2.TransportError, httpx2.StreamError, json.JSONDecodeError)):
            return self.problem("connection_error")
        return self.problem("api_error", type(exc).__name__)

    def problem(self, code: str, detail: str | None = None) -> ApiFailure:
        code = "api_error" if code == "response_too_large" else code
        return ApiFailure(code, f"toy: {code}" + (f" ({detail})" if detail else ""),
                          code in RETRYABLE)

    def fallback(self, loop: LoopView, problem: ApiFailure) -> ApiResponse | None:
        return None


class _Lines:
    """The streamed body, one JSON object per line."""

    def __init__(self, response: Any):
        self._response = response

    def events(self) -> Iterator[dict]:
        for line in self._response.iter_lines():
            if line.strip():
                yield json.loads(line)

    def abort(self) -> None:
        abort_connection(self._response)

    def close(self) -> None:
        self._response.close()


class _Translation:
    """Toy lines as Deltas; an error line raises."""

    def feed(self, line: dict) -> list[Delta]:
        if "error" in line:
            raise ToyError(line["error"]["code"], line["error"]["message"])
        if "text" in line:
            return [Delta(text=line["text"])]
        if "call" in line:
            return [Delta(tool=ToolCallDelta(line["call"], line.get("id"), line.get("name"),
                                             line.get("args")))]
        if "stop" in line:
            return [Delta(stop_reason=line["stop"], usage=_usage(line["usage"]))]
        return [Delta(complete=True)] if line.get("end") else []


def _checked(response: Any) -> Any:
    if response.status_code != 200:
        error = response.json().get("error") or {}
        raise ToyError(error.get("code", "api_error"), error.get("message", ""))
    return response


def _usage(usage: dict) -> dict[str, int]:
    return {"input_tokens": usage["in"], "output_tokens": usage["out"]}
