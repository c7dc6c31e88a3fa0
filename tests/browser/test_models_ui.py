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
    assert [job["status"] for job in finished] == ["done"]
    expect(page.locator("#memory")).to_have_attribute("data-state", "updated")
    memory = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    assert memory["content"].startswith(NOTE)
    assert model.chat_models == ["qwen2.5:7b"]
