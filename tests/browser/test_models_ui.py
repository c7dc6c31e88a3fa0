"""Any model from the browser: the Ollama preset, Test connection against an OpenAI-compatible
fake, a chat on it, and the memory update that follows (issue 13)."""
import pytest
from playwright.sync_api import expect

from src.utils import provider
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.openai_compat import replies

pytestmark = pytest.mark.browser

NOTE = "- Keeps bees on the roof.\n"


class LocalModel:
    """What the fake answers: the connection test's ping, memory tool runs, titles, chat."""

    def __init__(self, page, server):
        self.page, self.server = page, server
        self.chat_models: list[str] = []

    def __call__(self, body: dict):
        names = [tool["function"]["name"] for tool in body.get("tools") or ()]
        if names == ["ping"]:
            return replies.tool_use([("ping", {"word": "pong"})])
        if names:
            if any(m["role"] == "tool" for m in body["messages"]):
                return replies.text("Noted the bees.")
            return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                 "insert_text": NOTE.strip()})])
        if not body.get("stream"):
            return replies.text("Bees and honey")
        self.chat_models.append(body["model"])
        return replies.text("Bees! How wonderful.")


def test_ollama_preset_test_connection_chat_and_memory(page, server, app, openai_fake,
                                                      artifacts):
    model = LocalModel(page, server)
    openai_fake.default = replies.scripted(model)
    open_page(page, server, "/settings")

    page.get_by_role("button", name="Ollama").click()
    expect(page.locator("#set-provider")).to_have_value("openai_compatible")
    expect(page.locator("#set-base-url")).to_have_value("http://127.0.0.1:11434/v1")
    expect(page.locator("#key-heading")).to_have_text("Endpoint API key (optional)")
    page.fill("#set-base-url", openai_fake.url)  # the fake stands in for Ollama's port
    page.fill("#set-model", "")
    page.click("#test-connection")
    report = page.locator("#connection-report")
    expect(report).to_contain_text("Reachable: yes")
    expect(report).to_contain_text("Models: 3 found")
    expect(report).to_contain_text("Tool calls: yes · streaming yes")
    expect(report).to_contain_text("Context window: 8192 tokens")
    expect(page.locator("#model-options option[value='qwen2.5:7b']")).to_have_count(1)
    page.locator("#general").screenshot(path=str(artifacts / "settings_models.png"))

    page.fill("#set-context-window", "8192")
    page.click("#provider-form button[type=submit]")
    expect(page.locator("#provider-saved")).to_have_text("Saved")
    page.fill("#set-model", "qwen2.5:7b")
    page.click("#app-settings button[type=submit]")
    expect(page.locator("#app-saved")).to_have_text("Saved")
    saved = page.request.get(server.url + "/api/settings").json()
    assert (saved["provider"], saved["base_url"], saved["model"], saved["is_ready"]) == (
        "openai_compatible", openai_fake.url, "qwen2.5:7b", True)

    page.request.put(server.url + "/api/settings", data={"context_limit": 4})
    page.request.put(server.url + "/api/cortex/settings", data={"frequency": "frequent"})
    open_page(page, server)
    send(page, "I keep bees on my roof")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(REPLY_DONE.split(" [")[0])).to_contain_text("Bees! How wonderful.")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [job.status for job in finished] == ["done"]
    expect(page.locator("#memory")).to_have_attribute("data-state", "updated")
    memory = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    assert memory["content"].startswith(NOTE)
    assert model.chat_models == ["qwen2.5:7b"]


UNUSABLE_PLAN = ('{"calls": [{"name": "str_replace", "filename": "memory.md", '
                 '"old_str": "no such line", "new_str": "x"}], "summary": "Updated."}')


def test_an_edit_plan_that_cannot_be_applied_shows_why_the_update_failed(
        page, server, app, openai_fake):
    """An endpoint without tools whose edit plan names a change the file does not allow: the
    job fails (nothing applied) and the settings page says why."""
    def answer(body: dict):
        if body.get("response_format") or "cannot call tools" in str(body["messages"][0]):
            return replies.text(UNUSABLE_PLAN)
        return replies.text("Bees!" if body.get("stream") else "Bees")

    openai_fake.quirks = {"tools_refused"}
    openai_fake.default = replies.scripted(answer)
    assert page.request.put(server.url + "/api/settings", data={
        "provider": "openai_compatible", "base_url": openai_fake.url,
        "model": "llama3.2:3b"}).ok
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    stream = page.request.post(server.url + "/api/chat/stream",
                               data={"session_id": session["id"], "message": "I keep bees"})
    assert "event: done" in stream.text()
    before = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    open_page(page, server, "/settings")

    page.get_by_role("button", name="Update now").click()
    status = page.locator("#cx-status")
    expect(status).to_have_attribute("data-state", "running")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [(job.status, job.error) for job in finished] == [("failed", "tools_unsupported")]
    expect(status).to_have_attribute("data-state", "failed")
    expect(status).to_contain_text("The update failed: This model cannot update memory")
    expect(status).to_contain_text("could not be applied: str_replace: old_str was not found")
    after = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    assert after["revision"] == before["revision"]
