"""A cortex update is all-or-nothing (issue 9 §3): its edits become visible together, as one group
of `ai` revisions, in the transaction that marks its messages processed, or not at all; a
person's edit made meanwhile is never overwritten (real SDK, Claude fake, SQLite and files)."""
import os

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.cortex.staging import EditError, StagedEdits
from src.utils.storage import cortex_jobs as jobs
from tests.cortex.update_support import PID, Env, result_text, tool_results
from tests.fakes.claude import replies

MEMORY = "# Memories\n\n## About Jonas\n- Likes green tea.\n\n## Shared experiences\n"
SOUL = "# Soul\n\n- I am curious.\n"
FACT = "- 2025-06-03: Jonas adopted a cat named Pixel."


def _setup(env) -> list[dict]:
    env.persona()
    messages = env.say(env.session(), "I adopted a cat named Pixel!", "How lovely!")
    env.write("memory.md", MEMORY)
    env.write("soul.md", SOUL)
    return messages


def _insert_fact(line: int = 6):
    return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": line,
                                         "insert_text": FACT})])


def _server_error():
    return replies.http_error(500, "api_error", "Internal server error", retry_after_ms=1)


@pytest.fixture
def retrying_env(app_config):
    """An app whose SDK retries a 500 twice (three attempts), as in production."""
    app = create_app({**app_config, "ANTHROPIC_MAX_RETRIES": 2})
    yield Env(app)
    provider.shutdown_services(app)


def test_an_insert_then_three_500s_changes_nothing_and_a_rerun_adds_the_fact_once(
        retrying_env, claude):
    env = retrying_env
    messages = _setup(env)
    before = env.revisions()
    claude.enqueue(_insert_fact(), _server_error(), _server_error(), _server_error())

    job = env.run_job()

    assert (job.status, job.error, job.retryable) == ("failed", "api_error", True)
    assert len(claude.requests) == 4, "one insert round, then three attempts that got a 500"
    assert env.read("memory.md") == MEMORY, "the staged insert reached the file"
    assert env.revisions() == before, "a failed run left a revision"
    assert env.processed() == 0 and job.files == []
    assert [edit.model_dump() for edit in job.attempted] == [{
        "file": "memory.md", "action": "insert", "insert_line": 6, "insert_text": FACT,
        "anchor": "## Shared experiences\n", "at_end": True}]

    claude.enqueue(_insert_fact(), replies.text("Noted Pixel."))
    job = env.run_job()

    assert job.status == "done"
    assert env.read("memory.md").count("Pixel") == 1, "the fact was written twice"
    assert env.processed() == messages[-1]["id"]
    (rev,) = env.revisions()[len(before):]
    assert (rev["author"], rev["job_id"], rev["summary"]) == ("ai", job.id, "Noted Pixel.")


def test_edits_to_several_files_become_one_group_with_the_processed_mark(env, claude):
    messages = _setup(env)
    claude.enqueue(
        _insert_fact(),
        replies.tool_use([("str_replace", {"filename": "soul.md", "old_str": "curious",
                                           "new_str": "curious about animals"}),
                          ("str_replace", {"filename": "memory.md", "old_str": "green tea",
                                           "new_str": "green tea (daily)"})]),
        replies.text("Pixel and tea."))
    before = len(env.revisions())

    job = env.run_job()

    group = env.revisions()[before:]
    assert [(r["filename"], r["author"], r["job_id"]) for r in group] == [
        ("memory.md", "ai", job.id), ("soul.md", "ai", job.id)]
    assert {(r["message_from"], r["message_to"]) for r in group} == {
        (messages[0]["id"], messages[-1]["id"])}
    assert env.read("memory.md") == MEMORY.replace("green tea", "green tea (daily)") + FACT + "\n"
    assert env.read("soul.md") == SOUL.replace("curious", "curious about animals")
    assert job.files == ["memory.md", "soul.md"] and job.summary == "Pixel and tea."
    assert env.processed() == messages[-1]["id"]


def test_nothing_is_visible_while_the_run_is_still_going(env, claude):
    _setup(env)
    seen = {}

    def model(body):
        if len(body["messages"]) == 1:
            return _insert_fact()
        seen["memory"] = env.read("memory.md")
        seen["revisions"] = len(env.revisions())
        return replies.text("ok")

    claude.default = replies.scripted(model)
    before = len(env.revisions())
    env.run_job()
    assert seen == {"memory": MEMORY, "revisions": before}
    assert FACT in env.read("memory.md")


def test_a_persons_edit_during_the_run_is_kept_and_the_str_replace_replayed_on_it(env, claude):
    messages = _setup(env)
    person = MEMORY.replace("## About Jonas\n", "## About Jonas\n- Birthday: 1990-04-12.\n")

    def model(body):
        if len(body["messages"]) == 1:
            return replies.tool_use([("str_replace", {"filename": "memory.md",
                                                      "old_str": "green tea",
                                                      "new_str": "green tea (daily)"})])
        env.write("memory.md", person)  # after the tool call, before the run ends
        return replies.text("Tea noted.")

    claude.default = replies.scripted(model)
    job = env.run_job()

    assert job.status == "done"
    assert env.read("memory.md") == person.replace("green tea", "green tea (daily)")
    assert [r["author"] for r in env.revisions(filename="memory.md")][-2:] == ["user", "ai"]
    assert env.processed() == messages[-1]["id"]


def test_an_insert_is_replayed_after_its_anchor_line_when_a_person_added_lines_above(env,
                                                                                      claude):
    _setup(env)
    person = "Written by Jonas.\n\n" + MEMORY

    def model(body):
        if len(body["messages"]) == 1:
            return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 4,
                                                 "insert_text": "- Has a cat."})])
        env.write("memory.md", person)
        return replies.text("ok")

    claude.default = replies.scripted(model)
    assert env.run_job().status == "done"
    assert env.read("memory.md") == person.replace("- Likes green tea.\n",
                                                   "- Likes green tea.\n- Has a cat.\n")


def test_a_whole_file_write_meeting_a_persons_edit_applies_nothing_and_runs_again(env,
                                                                                   claude):
    messages = _setup(env)
    person = MEMORY + "- Person: Jonas's sister is Lena.\n"

    def model(body):
        if len(body["messages"]) == 1:
            return replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": "# Memories\n- cat Pixel\n"}),
                                     ("insert", {"filename": "soul.md", "insert_line": 0,
                                                 "insert_text": "I like cats."})])
        env.write("memory.md", person)
        return replies.text("Rewrote memory.")

    claude.default = replies.scripted(model)
    before = env.revisions()
    job = env.run_job()

    assert (job.status, job.error, job.retryable) == ("failed", "edit_conflict", True)
    assert "memory.md was edited while the update ran" in job.error_message
    assert env.read("memory.md") == person and env.read("soul.md") == SOUL
    assert env.revisions()[len(before):] == [env.revisions()[-1]]  # only the person's write
    assert env.revisions()[-1]["author"] == "user"
    assert env.processed() == 0 < messages[-1]["id"]


def test_a_person_edit_that_breaks_staged_edits_drops_them_and_tells_the_model(env, claude):
    _setup(env)

    def model(body):
        turn = len(body["messages"])
        if turn == 1:
            return replies.tool_use([("str_replace", {"filename": "memory.md",
                                                      "old_str": "green tea",
                                                      "new_str": "green tea (daily)"})])
        if turn == 3:
            env.write("memory.md", "# Memories\n- Jonas drinks coffee now.\n")
            return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                 "insert_text": "- Pixel."})])
        return replies.text("ok")

    claude.default = replies.scripted(model)
    job = env.run_job()

    (dropped,) = tool_results(claude.requests[2])
    assert dropped["is_error"] and "your earlier edits to it no longer fit the new text, so " \
                                   "they were dropped" in result_text(dropped)
    assert job.status == "done"
    assert env.read("memory.md") == "# Memories\n- Jonas drinks coffee now.\n"


def test_a_run_whose_job_was_taken_away_applies_nothing(env, claude):
    _setup(env)

    def model(body):
        if len(body["messages"]) == 1:
            return _insert_fact()
        # Another process's recovery fails the job (as for an expired lease) before the run ends.
        jobs.fail_interrupted(env.conn, lambda owner: False)
        return replies.text("ok")

    claude.default = replies.scripted(model)
    before = env.revisions()
    job = env.run_job()

    assert (job.status, job.error) == ("failed", "interrupted")
    assert env.read("memory.md") == MEMORY and env.revisions() == before
    assert env.processed() == 0


def test_hostile_tool_input_is_refused_and_the_rest_of_the_run_still_applies(env, claude):
    _setup(env)
    claude.enqueue(
        replies.tool_use([("insert", {"filename": "memory.md", "insert_line": True,
                                      "insert_text": "x"}),
                          ("str_replace", {"filename": "../app.db", "old_str": "a",
                                           "new_str": "b"}),
                          ("write_file", {"filename": "soul.md",
                                          "content": "x" * (env.cortex.hard_cap + 1)}),
                          ("insert", {"filename": "memory.md", "insert_line": 0,
                                      "insert_text": FACT})]),
        replies.text("ok"))
    job = env.run_job()
    results = tool_results(claude.requests[1])
    assert [bool(r.get("is_error")) for r in results] == [True, True, True, False]
    assert "over the hard limit" in result_text(results[2])
    assert job.status == "done" and job.files == ["memory.md"]
    assert env.read("memory.md") == FACT + "\n" + MEMORY and env.read("soul.md") == SOUL


def test_staged_text_must_be_valid_unicode_and_stay_under_the_cap():
    staged = StagedEdits(PID, {"memory.md": (1, "a\n")}, hard_cap=10)
    with pytest.raises(EditError) as err:
        staged.insert("memory.md", 0, "bad \ud800")
    assert err.value.kind == "invalid_text"
    with pytest.raises(EditError) as err:
        staged.write("memory.md", "x" * 11)
    assert err.value.kind == "too_large"
    assert staged.file("memory.md").content == "a\n" and staged.attempted() == []


def test_a_persona_deleted_before_the_group_is_applied_gets_nothing_back(env, claude, app):
    _setup(env)
    directory = env.cortex.get_cortex_path(PID)

    def model(body):
        if len(body["messages"]) == 1:
            return _insert_fact()
        provider.get_persona_service(app).delete(PID)  # after the last tool call
        return replies.text("Noted.")

    claude.default = replies.scripted(model)
    _job, _ = env.trigger.request_update(PID)
    env.worker.run_pending()
    assert not os.path.exists(directory), "applying recreated a deleted persona's files"
    assert env.revisions() == []
    assert env.conn.execute("SELECT COUNT(*) FROM cortex_changesets").fetchone()[0] == 0
