"""Issue 49, items 15 and 16 in the page: a ChatGPT export imported as the `.zip` ChatGPT sends
(another open page lists it without a reload), a conversation exported as Markdown and as PDF (its
text read back with the documents' PDF reader), folders with drag and drop, the archive and its
"Archived" view, and a temporary chat that leaves nothing behind — at 1280×800 and on a phone
(390×844, touch: the row's menu moves a conversation; a finger drags it too, test_folders_touch.py)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from navi.documents.extract import extract
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.test_session_places import CHATGPT, export_zip
from tests.ui.browser import Watched, open_app, open_context, send, wait_idle

pytestmark = pytest.mark.browser
LAPTOP = {"width": 1280, "height": 800}


def row(page: Page, title: str) -> Locator:
    return page.locator("#sessions .session").filter(has=page.locator(".session-name", has_text=title))


def menu_item(page: Page, title: str, action: str, *, tap: bool = False) -> Locator:
    target = row(page, title)
    more = target.get_by_role("button", name=f"More: {title}")
    if tap:
        more.tap()
    else:
        target.hover()
        more.click()
    menu = page.get_by_role("menu", name=f"More: {title}")
    expect(menu).to_be_visible()
    return menu.get_by_role("menuitem", name=action, exact=True)


def import_zip(page: Page, tmp_path: Path) -> None:
    path = tmp_path / "chatgpt-export.zip"
    path.write_bytes(export_zip(CHATGPT))
    page.locator("#import-file").set_input_files(str(path))
    expect(page.locator("#toast")).to_contain_text("Imported 2 conversations from ChatGPT")


def test_import_export_folders_and_archive_at_1280(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    use_script(fake_server).turn("Feed it **flour and water** daily.")
    context, watched = open_context(browser, navi, viewport=LAPTOP)
    try:
        page = open_app(context.new_page())
        # Another page, open on a conversation of its own, sees what the first imports.
        other = open_app(context.new_page())
        send(other, "How do I keep a sourdough starter?")
        wait_idle(other)

        import_zip(page, tmp_path)
        expect(row(page, "Sourdough starter")).to_have_count(1)  # no reload
        expect(row(page, "Packing list")).to_have_count(1)
        expect(row(other, "Packing list")).to_have_count(1)
        other.close()

        # Markdown and PDF from the conversation's menu.
        with page.expect_download() as info:
            menu_item(page, "Sourdough starter", "Export as Markdown").click()
        assert info.value.suggested_filename.endswith(".md")
        markdown = Path(info.value.path()).read_text(encoding="utf-8")
        assert markdown.startswith("# Sourdough starter\n") and "### You · " in markdown
        with page.expect_download() as info:
            menu_item(page, "Sourdough starter", "Export as PDF").click()
        assert info.value.suggested_filename.endswith(".pdf")
        text = " ".join(s.text for s in extract(Path(info.value.path()).read_bytes(), "x.pdf").sections)
        assert "Sourdough starter" in text and "You ·" in text and "Navi ·" in text

        # A folder: made, then a conversation dragged into it and out again.
        page.locator("#new-folder").click()
        ask = page.get_by_role("dialog", name="New folder")
        ask.get_by_label("Its name").fill("Kitchen")
        ask.get_by_role("button", name="Create").click()
        folder = page.locator("#sessions section.folder", has_text="Kitchen")
        expect(folder).to_contain_text("Drag a conversation here.")
        row(page, "Sourdough starter").drag_to(folder)
        expect(folder.locator(".session")).to_have_count(1)
        sid = row(page, "Sourdough starter").get_attribute("data-id")
        with navi.client() as http:
            assert http.get(f"/sessions/{sid}").json()["folder"] == "Kitchen"
        row(page, "Sourdough starter").drag_to(page.locator("#sessions .unfiled"))
        expect(page.locator("#sessions section.folder")).to_have_count(0)  # an empty folder goes
        with navi.client() as http:
            assert http.get(f"/sessions/{sid}").json()["folder"] is None
        # … and dropped on "New folder", into the folder it names.
        row(page, "Packing list").drag_to(page.locator("#new-folder"))
        ask.get_by_label("Its name").fill("Trips")
        ask.get_by_role("button", name="Create").click()
        trips = page.locator("#sessions section.folder", has_text="Trips")
        expect(trips.locator(".session")).to_have_count(1)

        # The archive: out of the list, in "Archived", and back.
        menu_item(page, "Sourdough starter", "Archive").click()
        expect(row(page, "Sourdough starter")).to_have_count(0)
        page.locator("#show-archived").click()
        expect(page.locator("#show-archived")).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#sessions .session")).to_have_count(1)
        menu_item(page, "Sourdough starter", "Unarchive").click()
        expect(page.locator("#sessions .session")).to_have_count(0)
        page.get_by_role("button", name="Back to conversations").click()
        expect(row(page, "Sourdough starter")).to_have_count(1)
    finally:
        context.close()
    assert watched.errors == [] and watched.foreign == []


def test_a_temporary_chat_and_the_menus_on_a_phone(
    phone: tuple[BrowserContext, Watched], navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    use_script(fake_server).turn("Noted: your cat is Miso.").turn("Noted: your dog is Rex.")
    context, _ = phone
    page = open_app(context.new_page())
    page.locator("#temporary-toggle").tap()
    send(page, "My cat is called Miso.")
    wait_idle(page)
    expect(page.locator("#temporary-badge")).to_be_visible()
    expect(page.locator("#temporary-badge")).to_have_text("Temporary chat")
    assert "#/s/" not in page.url  # a reload starts a new draft, not the chat that is gone
    with navi.client() as http:
        assert [temp for _, temp in navi_sessions(navi)] == [True] and http.get("/sessions").json() == []
        sid = navi_sessions(navi)[0][0]
    # Leaving it (a new conversation) deletes it: no session, no memory.
    page.get_by_role("button", name="Show conversations").tap()
    page.locator("#new-session-button").tap()
    expect(page.locator("#temporary-badge")).to_be_hidden()
    expect(page.locator("#temporary-toggle")).not_to_be_checked()
    with navi.client() as http:
        page.wait_for_function(
            f"async () => (await fetch('/sessions/{sid}')).status === 404", polling=100, timeout=10_000
        )
        assert http.get("/memory/facts").json() == [] and navi_sessions(navi) == []

    # A kept conversation: imported, moved to a folder from its menu, exported, archived.
    page.get_by_role("button", name="Show conversations").tap()
    import_zip(page, tmp_path)
    expect(row(page, "Packing list")).to_have_count(1)
    menu_item(page, "Packing list", "Move to folder…", tap=True).tap()
    ask = page.get_by_role("dialog", name="Move to folder")
    ask.get_by_label("Folder for").fill("Trips")
    ask.get_by_role("button", name="Move").tap()
    expect(page.locator("#sessions section.folder", has_text="Trips").locator(".session")).to_have_count(1)
    with page.expect_download() as info:
        menu_item(page, "Packing list", "Export as Markdown", tap=True).tap()
    assert Path(info.value.path()).read_text(encoding="utf-8").startswith("# Packing list\n")
    menu_item(page, "Packing list", "Archive", tap=True).tap()
    expect(row(page, "Packing list")).to_have_count(0)
    with navi.client() as http:
        archived = http.get("/sessions", params={"archived": True}).json()
        assert [(s["name"], s["folder"]) for s in archived] == [("Packing list", "Trips")]

    # Another temporary chat, and the tab closed: the page deletes it on its way out.
    page.locator("#new-session-button").tap()  # the list is still open
    page.locator("#temporary-toggle").tap()
    send(page, "My dog is called Rex.")
    wait_idle(page)
    expect(page.locator("#temporary-badge")).to_be_visible()
    assert [temp for _, temp in navi_sessions(navi)].count(True) == 1
    watcher = context.new_page()
    page.close(run_before_unload=True)
    watcher.wait_for_timeout(100)
    for _ in range(100):
        if not any(temp for _, temp in navi_sessions(navi)):
            break
        watcher.wait_for_timeout(100)
    assert [temp for _, temp in navi_sessions(navi)] == [False, False]  # the two imported ones


def navi_sessions(navi: LiveNavi) -> list[tuple[str, bool]]:
    """Every session row of the database as (id, temporary), temporary ones included."""
    with closing(sqlite3.connect(navi.settings.db_path)) as db:
        return [(sid, bool(temp)) for sid, temp in db.execute("SELECT id, temporary FROM sessions")]
