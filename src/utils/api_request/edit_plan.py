"""The fallback for endpoints that refuse tools: one JSON "edit plan", run through the same executor.

An adapter offers it as its `fallback` hook (the OpenAI-compatible one does, for a 4xx naming
tools). The model is asked once for `{"calls": [{"name", "arguments"}], "summary"}` (in the
provider's JSON mode where it has one, else as a fenced block); entries may carry their arguments
flat beside the name, or name the tool under `"tool"` (see `text_calls.py`). The calls run
through the loop's executor, so every check and revision is the same as with tools. A plan is
all-or-nothing and never fails silently: text that is no plan, a call to a tool not offered, or
any entry the executor refuses ends the run with `tools_unsupported`, naming what went wrong, and
the caller applies nothing.
"""
from __future__ import annotations

import json

from .adapter import LoopView, ProviderAdapter, Round
from .text_calls import UnknownToolText, calls_from_text, plan_summary
from .types import ApiResponse, RequestConfig, SystemBlock, ToolDefinition

PLAN_INSTRUCTIONS = (
    "\n\nThis endpoint cannot call tools. Instead answer with exactly one JSON object and "
    "nothing else: {\"calls\": [{\"name\": <tool name>, \"arguments\": {...}}, ...], "
    "\"summary\": <one sentence>}. The calls run in order, as if you had called the tools. "
    "Use an empty list if nothing needs to change. The tools:\n")


def run_edit_plan(loop: LoopView, adapter: ProviderAdapter, json_mode: dict) -> ApiResponse:
    """Asks for an edit plan (with `json_mode` merged into the body, once more without it if the
    endpoint refuses that) and applies it through the loop."""
    body = adapter.body(_plan_config(loop), loop.model, None)
    try:
        answer = loop.call({**body, **json_mode})
    except Exception as exc:
        problem = adapter.failure(exc)
        if problem.code != "invalid_request":
            return loop.fail(problem)
        try:
            answer = loop.call(body)
        except Exception as again:
            return loop.fail(adapter.failure(again))
    return _apply(loop, adapter, answer)


def _plan_config(loop: LoopView) -> RequestConfig:
    described = json.dumps([_describe(tool) for tool in loop.tools], ensure_ascii=False)
    system = loop.config.system_prompt
    blocks = system if isinstance(system, list) else [SystemBlock(system)]
    return RequestConfig(system_prompt=[*blocks, SystemBlock(PLAN_INSTRUCTIONS + described)],
                         messages=loop.config.messages, max_tokens=loop.config.max_tokens)


def _apply(loop: LoopView, adapter: ProviderAdapter, answer: Round) -> ApiResponse:
    try:
        calls = calls_from_text(answer.text, loop.known)
    except UnknownToolText as exc:
        return loop.fail(adapter.problem("tools_unsupported", str(exc)))
    if answer.stop_reason == "max_tokens" or (calls is None and not _empty_plan(answer.text)):
        return loop.fail(adapter.problem("tools_unsupported", "the edit plan was not usable JSON"))
    results = loop.execute(calls or [])
    loop.record(1, calls or [], results)
    refused = [f"{result.name}: {result.content}" for result in results if result.is_error]
    if refused:
        return loop.fail(adapter.problem(
            "tools_unsupported", "the edit plan could not be applied: " + "; ".join(refused)))
    summary = Round(plan_summary(answer.text), [], answer.stop_reason, answer.usage, answer.raw)
    return loop.finish(summary, answer.stop_reason)


def _describe(tool: ToolDefinition | dict) -> dict:
    if isinstance(tool, dict):
        return {"name": tool.get("name"), "description": tool.get("description", ""),
                "parameters": tool.get("input_schema") or tool.get("parameters") or {}}
    return {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}


def _empty_plan(text: str | None) -> bool:
    try:
        data = json.loads((text or "").strip())
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("calls") == []
