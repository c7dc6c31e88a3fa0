"""Memory updates on models that handle tools badly: recovered, planned, or honestly refused.

The real update service and job store run against FakeOpenAI; the edits go through the same
staged, all-or-nothing apply as on Claude."""
import json

import pytest

from src.utils import provider
from tests.chat.chat_support import live_config
from tests.fakes.openai_compat import replies

EDIT = ("insert", {"filename": "memory.md", "insert_line": 0,
                   "insert_text": "- Lena paddles on the Elbe."})


@pytest.fixture
def claude(openai_fake):
    return openai_fake


@pytest.fixture
def app_config(app_config, openai_fake):
    return live_config(app_config, openai_fake)


def run_update(app, make_session, add_messages):
    add_messages(make_session()["id"], 4)
    return provider.get_update_service(app).run("default")


def memory(app) -> str:
    return provider.get_cortex_service(app).read_file("default", "memory.md")


def test_a_tool_call_sent_as_text_still_updates_memory(app, openai_fake, make_session,
                                                       add_messages):
    openai_fake.quirks = {"tool_as_text"}
    openai_fake.enqueue(replies.tool_use([EDIT]), replies.text("Remembered the paddling."))
    result = run_update(app, make_session, add_messages)
    assert result["success"] and memory(app).startswith("- Lena paddles on the Elbe.\n")


def test_an_endpoint_without_tools_updates_memory_through_an_edit_plan(
        app, openai_fake, make_session, add_messages, rows):
    openai_fake.quirks = {"tools_refused"}
    plan = ('{"calls": [{"name": "insert", "arguments": {"filename": "memory.md", '
            '"insert_line": 0, "insert_text": "- Lena paddles on the Elbe."}}], '
            '"summary": "Noted the paddling."}')
    openai_fake.enqueue(replies.text(plan))
    result = run_update(app, make_session, add_messages)
    assert result["success"] and result["summary"] == "Noted the paddling."
    assert memory(app).startswith("- Lena paddles on the Elbe.\n")
    revisions = rows("SELECT author FROM cortex_revisions WHERE filename = 'memory.md' "
                     "ORDER BY id DESC LIMIT 1")
    assert revisions == [{"author": "ai"}]


def test_a_bad_plan_changes_nothing_and_says_the_model_cannot_update_memory(
        app, openai_fake, make_session, add_messages):
    before = memory(app)
    openai_fake.quirks = {"tools_refused"}
    half_valid = ('{"calls": [{"name": "insert", "arguments": {"filename": "memory.md", '
                  '"insert_line": 0, "insert_text": "- kept?"}}, {"name": "rm_rf", '
                  '"arguments": {}}]}')
    openai_fake.enqueue(replies.text(half_valid))
    result = run_update(app, make_session, add_messages)
    assert result["error"] == "tools_unsupported" and result["retryable"] is False
    assert "cannot update memory" in result["error_message"]
    assert memory(app) == before


def test_a_call_cut_by_length_is_not_applied(app, openai_fake, make_session, add_messages):
    before = memory(app)
    cut = replies.truncated_tool_use("insert", '{"filename": "memory.md", "insert_li')
    openai_fake.enqueue(cut, cut)
    result = run_update(app, make_session, add_messages)
    assert result["error"] == "truncated_tool_call" and memory(app) == before


FLAT_INSERT = {"name": "insert", "filename": "memory.md", "insert_line": 0,
               "insert_text": "- Lena paddles on the Elbe."}


def run_job(client, app, make_session, add_messages) -> dict:
    """An update started as the UI starts one (POST …/cortex/update) and run by the worker;
    the job as the UI then reads it."""
    add_messages(make_session()["id"], 4)
    job_id = client.post("/api/personas/default/cortex/update", json={}).get_json()["job_id"]
    provider.get_cortex_worker(app).run_pending()
    return client.get(f"/api/cortex/jobs/{job_id}").get_json()


@pytest.mark.parametrize("entry", [FLAT_INSERT,
                                   {"tool": "insert", **{k: v for k, v in FLAT_INSERT.items()
                                                         if k != "name"}}])
def test_a_plan_with_flat_arguments_is_applied_like_the_nested_form(
        client, app, openai_fake, make_session, add_messages, entry):
    openai_fake.quirks = {"tools_refused"}
    openai_fake.enqueue(replies.text(json.dumps({"calls": [entry], "summary": "Noted it."})))
    job = run_job(client, app, make_session, add_messages)
    assert (job["status"], job["files"], job["error"]) == ("done", ["memory.md"], None)
    assert memory(app).startswith("- Lena paddles on the Elbe.\n")


def test_a_plan_whose_entries_cannot_be_applied_fails_the_job_with_the_reason(
        client, app, openai_fake, make_session, add_messages):
    before = memory(app)
    openai_fake.quirks = {"tools_refused"}
    unusable = {"calls": [{"name": "insert", "arguments": {"filename": "memory.md",
                                                           "insert_line": 0,
                                                           "insert_text": "- kept?"}},
                          {"name": "str_replace", "arguments": {"filename": "memory.md",
                                                                "old_str": "not in the file",
                                                                "new_str": "x"}}],
                "summary": "Updated."}
    openai_fake.enqueue(replies.text(json.dumps(unusable)))
    job = run_job(client, app, make_session, add_messages)
    assert (job["status"], job["error"], job["files"]) == ("failed", "tools_unsupported", [])
    assert "could not be applied: str_replace: old_str was not found" in job["error_message"]
    assert memory(app) == before
