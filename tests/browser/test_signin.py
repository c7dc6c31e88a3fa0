"""Signing in with the access token in real Chromium: redirect, error, cookie, socket, sign-out.

Owned by the security work (tests/security/ holds the rest); it lives here to share the one
Chromium of the browser suite."""
import json

import pytest
from playwright.sync_api import expect

TOKEN = "pc-access-token-browser-5d2e8a91c07f43b6"

pytestmark = pytest.mark.browser


@pytest.fixture
def app_config(app_config):
    return {**app_config, "ACCESS_TOKEN": TOKEN}


def test_sign_in_then_chat_over_the_socket_then_sign_out(page, server):
    page.goto(server.url + "/settings")
    assert page.url == server.url + "/signin?next=/settings"
    token_field = page.get_by_label("Access token")
    expect(token_field).to_be_focused()

    token_field.fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("That is not the access token.")
    expect(page.get_by_label("Access token")).to_have_attribute("aria-invalid", "true")

    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url + "/settings")
    page.wait_for_selector("body[data-ready=true]")
    [cookie] = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    assert page.evaluate("document.cookie") == ""

    with page.expect_websocket() as opened:
        page.goto(server.url + "/")
    socket = opened.value
    frame = socket.wait_for_event("framereceived")
    assert json.loads(frame)["type"] == "subscribed"

    page.goto(server.url + "/signin")
    expect(page.locator("#signin-status")).to_have_text("You are signed in on this browser.")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(server.url + "/signin")
    expect(page.get_by_label("Access token")).to_be_visible()
    assert page.context.cookies() == []
    assert page.goto(server.url + "/api/personas").status == 401
