"""Character cards in the browser (DESIGN §12): a card dropped on the personas page is
previewed, then created; its picture and greeting show in the chat; it exports again; the
Settings → Data button downloads a backup."""
import base64
import json
import zipfile

import pytest
from playwright.sync_api import expect

from src.utils.portability import png as png_chunks
from src.utils.portability.card_files import CARD_CHUNKS
from tests.browser.support import open_page
from tests.portability.support import V3_CARD, b64, png

pytestmark = pytest.mark.browser


def _drop(page, selector: str, data: bytes, name: str) -> None:
    """Drops a file on `selector` the way a person dragging it from their desktop would."""
    transfer = page.evaluate_handle(
        """([bytes, name]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }));
            return transfer;
        }""", [list(data), name])
    for kind in ("dragenter", "dragover", "drop"):
        page.dispatch_event(selector, kind, {"dataTransfer": transfer})


def test_drop_a_card_preview_create_chat_and_export(page, server, model):
    card = png({"ccv3": b64(V3_CARD)}, size=(48, 48), color=(200, 30, 40))
    open_page(page, server, "/settings")
    _drop(page, "#card-drop", card, "aria.png")
    preview = page.locator("#card-preview")
    expect(preview).to_be_visible()
    expect(page.locator("#card-preview-name")).to_have_text("Aria")
    expect(page.locator("#card-preview-greeting")).to_contain_text("*Ari opens the door.*")
    expect(page.locator("#card-preview-avatar")).to_be_visible()
    expect(page.locator("#card-preview-ignored")).to_contain_text("agnai/voice")
    personas = page.request.get(server.url + "/api/personas").json()["personas"]
    assert [p["name"] for p in personas] == ["Mira"], "the preview must not create anything"

    page.click("#card-create")
    tile = page.locator(".persona-card", has_text="Aria")
    expect(tile.locator("img.avatar-img")).to_be_visible()
    persona = next(p for p in page.request.get(server.url + "/api/personas").json()["personas"]
                   if p["name"] == "Aria")

    memories = tile.get_by_label("Include memories")
    expect(memories).not_to_be_checked()
    with page.expect_download() as download_info:
        tile.locator(".persona-export-link").click()
    with open(download_info.value.path(), "rb") as handle:
        exported = handle.read()
    chunks = {k: json.loads(base64.b64decode(v))
              for k, v in png_chunks.text_chunks(exported, CARD_CHUNKS)}
    assert chunks["ccv3"]["data"]["name"] == "Aria" and "chara" in chunks
    assert "cortex" not in chunks["ccv3"]["data"]["extensions"]["persona_cortex"]

    open_page(page, server, f"/?persona={persona['id']}")
    expect(page.locator("#persona-list img.avatar-img")).to_have_count(1)
    expect(page.locator("#chat-avatar img.avatar-img")).to_be_visible()
    greeting = page.get_by_role("article", name="Greeting from Aria")
    expect(greeting).to_contain_text("Ari opens the door.")
    expect(greeting).not_to_contain_text("{{char}}")
    expect(greeting.locator("img.avatar-img")).to_be_visible()
    loaded = page.evaluate("""async (url) => {
        const img = new Image(); img.src = url; await img.decode(); return img.naturalWidth; }""",
                           persona["avatar_url"])
    assert loaded == 48
    from tests.browser.support import LAST_REPLY, REPLY_DONE, send
    from tests.fakes.claude import replies
    model.chat.append(replies.text("Come in, quickly!"))
    send(page, "Knock knock")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(f"{LAST_REPLY} img.avatar-img")).to_be_visible()
    page.reload()                                   # stored replies carry it too
    expect(page.locator(f"{LAST_REPLY} img.avatar-img")).to_be_visible()


def test_a_refused_card_is_explained_and_nothing_is_created(page, server):
    open_page(page, server, "/settings")
    _drop(page, "#card-drop", png({"Title": "just a picture"}), "photo.png")
    expect(page.locator("#card-error")).to_contain_text("holds no character card")
    expect(page.locator("#card-preview")).to_be_hidden()
    assert len(page.request.get(server.url + "/api/personas").json()["personas"]) == 1


def test_the_file_picker_imports_too_and_the_picture_can_be_removed(page, server):
    open_page(page, server, "/settings")
    page.set_input_files("#card-file", files=[{"name": "aria.png", "mimeType": "image/png",
                                               "buffer": png({"ccv3": b64(V3_CARD)})}])
    page.click("#card-create")
    tile = page.locator(".persona-card", has_text="Aria")
    expect(tile.locator("img.avatar-img")).to_be_visible()
    tile.get_by_role("button", name="Edit Aria").click()
    page.click("#p-avatar-remove")
    expect(tile.locator("img.avatar-img")).to_have_count(0)
    page.set_input_files("#p-avatar-file", files=[{"name": "me.png", "mimeType": "image/png",
                                                   "buffer": png(size=(20, 20))}])
    expect(tile.locator("img.avatar-img")).to_be_visible()


def test_the_data_section_downloads_a_backup(page, server):
    open_page(page, server, "/settings")
    with page.expect_download() as download_info:
        page.click("#backup-download")
    with zipfile.ZipFile(download_info.value.path()) as archive:
        names = archive.namelist()
    assert "manifest.json" in names and "app.db" in names and "secrets.json" not in names


def test_alternate_greetings_can_be_browsed_before_the_first_message(page, server, model):
    from tests.browser.support import REPLY_DONE, send, system_text
    from tests.fakes.claude import replies
    response = page.request.post(server.url + "/api/personas", data={
        "name": "Aria", "greeting": "Hello there.",
        "alternate_greetings": ["Storm's coming.", "Ahoy, sailor!"]})
    assert response.status == 201, response.text()
    model.chat.append(replies.text("Aye."))
    open_page(page, server, f"/?persona={response.json()['id']}")
    greeting = page.get_by_role("article", name="Greeting from Aria")
    expect(greeting).to_contain_text("Hello there.")
    expect(greeting.locator(".greeting-count")).to_have_text("1 / 3")
    greeting.get_by_role("button", name="Previous greeting").click()
    expect(greeting).to_contain_text("Ahoy, sailor!")
    expect(greeting.locator(".greeting-count")).to_have_text("3 / 3")
    send(page, "Hi Aria")
    page.wait_for_selector(REPLY_DONE)
    assert "<greeting>\nAhoy, sailor!\n</greeting>" in system_text(model.chat_bodies[-1])
    expect(greeting.get_by_role("button", name="Next greeting")).to_have_count(0)
    expect(greeting).to_contain_text("Ahoy, sailor!")


def test_an_archive_previews_as_an_archive_not_as_a_card_version(page, server):
    exported = page.request.get(
        server.url + "/api/personas/default/export?format=archive&include_memories=1")
    assert exported.ok, exported.text()
    open_page(page, server, "/settings")
    page.set_input_files("#card-file", files=[{"name": "mira.zip", "mimeType": "application/zip",
                                               "buffer": exported.body()}])
    meta = page.locator("#card-preview-meta")
    expect(meta).to_have_text("Persona Cortex archive · 0 conversations · includes memories")
    expect(meta).not_to_contain_text("null")


def test_a_new_persona_gets_its_picture_from_the_form(page, server):
    open_page(page, server, "/settings")
    page.click("#persona-new")
    page.fill("#p-name", "Theo")
    page.set_input_files("#p-avatar-file", files=[{
        "name": "theo.png", "mimeType": "image/png",
        "buffer": png({"Comment": "private note"}, size=(24, 24))}])
    expect(page.locator("#p-avatar-view img.avatar-img")).to_be_visible()
    page.click("#persona-save")
    tile = page.locator(".persona-card", has_text="Theo")
    expect(tile.locator("img.avatar-img")).to_be_visible()
    expect(page.locator("#persona-form")).to_be_hidden()
    theo = next(p for p in page.request.get(server.url + "/api/personas").json()["personas"]
                if p["name"] == "Theo")
    stored = page.request.get(server.url + theo["avatar_url"]).body()
    assert stored.startswith(b"\x89PNG") and b"private note" not in stored


def test_a_refused_picture_for_a_new_persona_is_explained(page, server):
    open_page(page, server, "/settings")
    page.click("#persona-new")
    page.fill("#p-name", "Theo")
    page.set_input_files("#p-avatar-file", files=[{
        "name": "theo.png", "mimeType": "image/png", "buffer": b"not a picture at all"}])
    page.click("#persona-save")
    expect(page.locator("#persona-error")).to_contain_text("Theo was created, but its picture was refused")
    expect(page.locator("#persona-form-heading")).to_have_text("Edit Theo")
    theo = next(p for p in page.request.get(server.url + "/api/personas").json()["personas"]
                if p["name"] == "Theo")
    assert theo["avatar_url"] is None


def test_card_text_on_the_settings_page_names_the_person(page, server):
    created = page.request.post(server.url + "/api/personas", data={
        "name": "Aria", "description": "{{char}} keeps the lighthouse for {{user}}."})
    assert created.status == 201, created.text()
    open_page(page, server, "/settings")
    tile = page.locator(".persona-card", has_text="Aria")
    expect(tile).to_contain_text("Aria keeps the lighthouse for User.")

    page.fill("#set-user-name", "Sam")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#app-saved")).to_have_text("Saved")
    expect(tile).to_contain_text("Aria keeps the lighthouse for Sam.")
    page.set_input_files("#card-file", files=[{"name": "aria.json", "mimeType": "application/json",
                                               "buffer": json.dumps(V3_CARD).encode()}])
    expect(page.locator("#card-preview-greeting")).to_have_text(
        "*Ari opens the door.* Come in, Sam, quickly!")
    page.reload()
    expect(tile).to_contain_text("Aria keeps the lighthouse for Sam.")
    expect(tile).not_to_contain_text("{{")
