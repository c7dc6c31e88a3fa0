"""Server-rendered pages in the interface language: the setting, else the browser's
Accept-Language; the page's scripts get the same strings as an inert JSON block."""
import json
import re

import pytest

from src.utils import i18n

GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}
ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}


def _strings(page: str) -> dict:
    """The catalogue embedded in a page for its scripts."""
    block = re.search(r'<template id="ui-strings">([^<]*)</template>', page)
    return json.loads(block.group(1))


def test_without_a_setting_the_pages_follow_accept_language_and_nothing_is_stored(client):
    german = client.get("/", headers=GERMAN).get_data(as_text=True)
    assert '<html lang="de"' in german and "Neuer Chat" in german and "New chat" not in german
    assert _strings(german) == i18n.catalogue("de")
    english = client.get("/", headers=ENGLISH).get_data(as_text=True)
    assert '<html lang="en"' in english and "New chat" in english
    assert _strings(english) == i18n.catalogue("en")
    assert '<html lang="en"' in client.get("/").get_data(as_text=True)  # no header: English
    settings = client.get("/settings", headers=GERMAN).get_data(as_text=True)
    assert 'data-chosen="false"' in settings and "Noch nicht gewählt" in settings
    assert client.get("/api/settings").get_json()["language"] == "en"   # reading stores nothing


def test_the_language_setting_wins_over_the_browser(client):
    assert client.put("/api/settings", json={"language": "de"}).status_code == 200
    page = client.get("/settings", headers=ENGLISH).get_data(as_text=True)
    assert '<html lang="de"' in page and "<h1>Einstellungen</h1>" in page
    assert "Sprache für Oberfläche und Prompts" in page and 'data-chosen="true"' in page
    assert "Noch nicht gewählt" not in page
    client.put("/api/settings", json={"language": "en"})
    page = client.get("/", headers=GERMAN).get_data(as_text=True)
    assert '<html lang="en"' in page and "New chat" in page
    docs = client.get("/api/docs", headers=GERMAN).get_data(as_text=True)
    assert '<html lang="en"' in docs and "API reference" in docs


def test_a_hostile_accept_language_header_gets_the_default(client):
    for header in ("de;q=2;q=3" + ",de" * 5000, "\x7f\x01de", "*", ";;;", "de-" + "x" * 5000):
        page = client.get("/", headers={"Accept-Language": header})
        assert page.status_code == 200
        assert re.search(r'<html lang="(en|de)"', page.get_data(as_text=True))


class TestSignIn:
    TOKEN = "pc-access-token-i18n-4b1f2d9e8a7c6b5d"

    @pytest.fixture
    def app_config(self, app_config):
        return {**app_config, "ACCESS_TOKEN": self.TOKEN}

    def test_the_sign_in_page_and_its_errors_follow_the_language(self, client):
        page = client.get("/signin", headers=GERMAN).get_data(as_text=True)
        assert '<html lang="de"' in page and '<label for="signin-token">Zugangstoken</label>' in page
        assert 'id="ui-strings"' not in page          # its script shows no text
        wrong = client.post("/signin", data={"token": "nope"}, headers=GERMAN)
        assert wrong.status_code == 401
        assert "Das ist nicht das Zugangstoken." in wrong.get_data(as_text=True)
        english = client.post("/signin", data={"token": "nope"}, headers=ENGLISH)
        assert "That is not the access token." in english.get_data(as_text=True)
        for attempt in range(10):
            client.post("/signin", data={"token": f"no{attempt}"}, headers=GERMAN)
        locked = client.post("/signin", data={"token": "again"}, headers=GERMAN)
        assert locked.status_code == 429
        assert re.search(r"Zu viele Fehlversuche von deiner Adresse: Versuch es in \d+ Sekunden",
                         locked.get_data(as_text=True))

    def test_a_chosen_language_applies_to_the_sign_in_page_too(self, client):
        auth = {"Authorization": f"Bearer {self.TOKEN}"}
        assert client.put("/api/settings", json={"language": "de"}, headers=auth).status_code == 200
        page = client.get("/signin", headers=ENGLISH).get_data(as_text=True)
        assert '<html lang="de"' in page and ">Anmelden</button>" in page
