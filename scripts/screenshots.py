"""Takes the screenshots in docs/*.png of a seeded app, with the Claude fake as the model.

Not a test: run `.venv/bin/python scripts/screenshots.py [out_dir]` after changing the UI, and look
at the pictures. Needs /usr/bin/chromium (see scripts/test.sh).
"""
import json
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from src.app import create_app  # noqa: E402
from src.utils import provider  # noqa: E402
from tests.fakes.claude import FakeClaude, replies  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402

KEY = "sk-ant-screenshot-key-0000-a1b2"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
MEMORY = """# Memories

## Important details about Jonas
- Works as a landscape architect in Leipzig.
- Drinks his tea without sugar, always green tea in the afternoon.

## Shared experiences
- 2026-11-02: He told me about the rainy walk along the Elster river.

## Things I want to remember
- Ask how the competition entry for the city park went.
"""
CHAT = [
    ("Guess what: I finally adopted the cat from the shelter! Her name is Pixel.",
     "Oh, that's wonderful news! Welcome home, **Pixel**.\n\nHow is she settling in? The "
     "first days are often a mix of:\n\n- hiding under the sofa,\n- cautious exploring at "
     "night,\n- and suddenly deciding *your* chair is hers.\n\nDid the shelter tell you anything "
     "about her story?"),
    ("She's been under the bed all day, but she purred when I brought her dinner.",
     "Purring on day one is a really good sign: she has decided you are safe. Give her the "
     "quiet for now; she will come out when she is ready.\n\nAnd I'm curious: did the park "
     "competition entry go out in time last week?"),
]
UPDATED = MEMORY.replace(
    "afternoon.\n",
    "afternoon.\n- Adopted a shelter cat named Pixel (2026-11-21); she hides under the bed "
    "but purrs at dinner.\n").replace(
    "- Ask how the competition entry for the city park went.\n",
    "- Ask how Pixel is settling in.\n- Ask whether the park competition entry went out in time.\n")
UPDATE_EDITS = [("write_file", {"filename": "memory.md", "content": UPDATED})]
CHAT_DE = [
    ("Hallo Theo! Ich plane für Samstag eine Tour auf den Hochgrat. Ist das eine gute Idee?",
     "Servus! Der **Hochgrat** ist eine schöne Wahl, gerade jetzt im Spätherbst.\n\nEin paar "
     "Dinge, bevor du losgehst:\n\n- Früh starten: Die Tage sind kurz.\n- Auf dem Grat kann es "
     "schon vereist sein, also gute Schuhe.\n- Die Bergbahn fährt nur am Wochenende.\n\nGehst "
     "du allein oder mit jemandem?"),
]


def model(body: dict):
    """A tiny scripted model: chat replies in order, a title, and one cortex update."""
    if body.get("tools"):
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return replies.text("Noted Pixel, Jonas's new cat, and to ask how she settles in.")
        return replies.tool_use(UPDATE_EDITS, text="Jonas adopted a cat; I'll remember her.")
    if not body.get("stream"):
        german = "Theo Brandt" in json.dumps(body)
        return replies.text("Samstag auf den Hochgrat" if german else "Pixel comes home")
    turns = sum(1 for m in body["messages"] if m["role"] == "user")
    script = CHAT_DE if "Theo Brandt" in json.dumps(body.get("system")) else CHAT
    return replies.text(script[min(turns, len(script)) - 1][1], event_delay=0.003)


def call(server, method: str, path: str, body=None, headers=None) -> dict:
    """One JSON request to the live app."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method, headers={
        "Content-Type": "application/json", "Origin": server.url, **(headers or {})})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"null")


def seed(server) -> None:
    """A second persona, a user-edited memory.md and friendly settings."""
    call(server, "PUT", "/api/settings", {"user_name": "Jonas", "context_limit": 4})
    call(server, "PUT", "/api/cortex/settings", {"frequency": "rare"})
    call(server, "POST", "/api/personas", {
        "name": "Theo Brandt", "language": "de",
        "description": "Ein ruhiger Bergführer aus dem Allgäu, der gern Geschichten erzählt."})
    current = call(server, "GET", "/api/personas/default/cortex/memory.md")
    call(server, "PUT", "/api/personas/default/cortex/memory.md", {"content": MEMORY},
         {"If-Match": f'"{current["revision"]}"'})


def chat(page, server) -> None:
    """Two exchanges typed into the real UI."""
    page.goto(server.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    for text, _ in CHAT:
        page.fill("#composer-input", text)
        page.keyboard.press("Enter")
        page.wait_for_selector("#messages .msg-assistant:last-of-type [data-action=regenerate]")


def _between(page, first: str, last: str) -> dict:
    """A page-coordinates clip from the top of `first` to the bottom of `last`, with a margin."""
    top = page.locator(first).bounding_box()
    bottom = page.locator(last).bounding_box()
    scroll = page.evaluate("window.scrollY")
    y = top["y"] + scroll - 16
    return {"x": 0, "y": y, "width": page.viewport_size["width"],
            "height": bottom["y"] + scroll + bottom["height"] + 16 - y}


def merge_view(page, server, out_dir: Path) -> None:
    """A draft meets a newer revision: the three-way merge with one automatic and one overlapping
    change (the person's draft and the persona's line both at the end)."""
    text = page.input_value("#cortex-text")
    page.fill("#cortex-text", text.replace("- Works as", "- Plays the cello on Sundays.\n- Works as")
              + "- Wants to visit Lisbon in spring.\n")
    current = call(server, "GET", "/api/personas/default/cortex/memory.md")
    call(server, "PUT", "/api/personas/default/cortex/memory.md",
         {"content": current["content"] + "- Pixel now sleeps on Jonas's desk.\n"},
         {"If-Match": f'"{current["revision"]}"'})
    page.click("#cortex-save")
    page.wait_for_selector("#conflict .merge-conflict")
    page.locator("#conflict").screenshot(path=out_dir / "cortex-merge.png")
    page.locator("#conflict-discard").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Discard draft").click()


def shoot(browser, app, server, out_dir: Path) -> None:
    """The chat (after a triggered memory update), the cortex editor, a history diff, the API
    reference."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    chat(page, server)
    provider.get_cortex_worker(app).run_pending()
    page.wait_for_selector("#memory[data-state=updated]")
    page.wait_for_selector("#messages .memory-note")
    page.evaluate("document.getElementById('messages').scrollTop = 1e6")
    page.screenshot(path=out_dir / "chat.png")

    page.goto(server.url + "/settings#memory")
    page.wait_for_selector("#history-list .history-item")
    page.click(".segmented [data-view=split]")
    page.fill("#cortex-text", page.input_value("#cortex-text")
              + "- Loves the smell of rain on warm stones.\n")
    page.wait_for_selector("#cortex-preview li:has-text('warm stones')")
    page.evaluate("document.querySelector('.topbar').style.position = 'static'")
    page.screenshot(path=out_dir / "cortex-editor.png", full_page=True,
                    clip=_between(page, "#memory", ".cortex-editor"))
    page.click(".segmented [data-view=edit]")
    page.click("#cortex-revert")
    merge_view(page, server, out_dir)

    page.goto(server.url + "/settings?persona=default&file=memory.md&view=history")
    page.wait_for_selector("#diff .diff-add")
    page.locator("#history-list .history-item").nth(1).click()
    page.wait_for_selector("#diff .diff-word")
    page.locator(".cortex-history").screenshot(path=out_dir / "history-diff.png")

    page.goto(server.url + "/api/docs")
    page.wait_for_selector("body[data-ready=true]", state="attached")
    page.wait_for_selector(".opblock-tag-section .opblock")
    page.screenshot(path=out_dir / "api-docs.png")
    context.close()

    german_chat(browser, server, out_dir)

    dark = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    page = dark.new_page()
    page.goto(server.url + "/")
    page.wait_for_selector("#messages .memory-note")
    page.evaluate("document.getElementById('messages').scrollTop = 1e6")
    page.screenshot(path=out_dir / "chat-dark.png")
    dark.close()

    phone = browser.new_context(viewport={"width": 375, "height": 740}, color_scheme="dark",
                                has_touch=True, is_mobile=True)
    page = phone.new_page()
    page.goto(server.url + "/")
    page.wait_for_selector("#messages .memory-note")
    page.evaluate("document.getElementById('messages').scrollTop = 1e6")
    page.screenshot(path=out_dir / "chat-phone-dark.png")
    phone.close()


def german_chat(browser, server, out_dir: Path) -> None:
    """The chat with Theo (a German persona) in a browser that prefers German: the interface
    follows Accept-Language, since no language is chosen in the settings."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="de-DE")
    page = context.new_page()
    theo = next(p for p in call(server, "GET", "/api/personas")["personas"]
                if p["name"] == "Theo Brandt")
    page.goto(f"{server.url}/?persona={theo['id']}")
    page.wait_for_selector("body[data-ready=true]")
    for text, _ in CHAT_DE:
        page.fill("#composer-input", text)
        page.keyboard.press("Enter")
        page.wait_for_selector("#messages .msg-assistant:last-of-type [data-action=regenerate]")
    page.screenshot(path=out_dir / "chat-de.png")
    context.close()


def main(out_dir: Path) -> None:
    """Seeds an app on a temporary data directory and photographs it into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as data_dir, FakeClaude(api_key=KEY) as fake:
        fake.default = replies.scripted(model)
        app = create_app({"DATA_DIR": data_dir, "ANTHROPIC_API_KEY": KEY,
                          "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_MAX_RETRIES": 0,
                          "ANTHROPIC_TIMEOUT": 10.0, "CORTEX_WORKER": False})
        with LiveServer(app) as server, sync_playwright() as playwright:
            seed(server)
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                 args=CHROMIUM_ARGS)
            try:
                shoot(browser, app, server, out_dir)
            finally:
                browser.close()
    print(f"screenshots written to {out_dir}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
