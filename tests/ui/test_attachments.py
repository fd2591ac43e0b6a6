"""Files and images from the page: chosen, pasted or dropped, up to the model's request and back."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, session_id, wait_idle

pytestmark = pytest.mark.browser


def png(color: str, size: tuple[int, int] = (24, 16)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def put_files(
    page: Page, event: str, target: str, name: str, data: bytes, media_type: str, pad: int = 0
) -> None:
    """Paste (`paste`) or drop (`drop`) a file on an element, as the browser would deliver it.

    `pad` appends that many zero bytes inside the page (cheap big files)."""
    page.evaluate(
        """([event, target, name, b64, type, pad]) => {
            const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes, new Uint8Array(pad)], name, { type }));
            const init = { bubbles: true, cancelable: true };
            const fired = event === "paste"
              ? new ClipboardEvent("paste", { ...init, clipboardData: transfer })
              : new DragEvent("drop", { ...init, dataTransfer: transfer });
            document.querySelector(target).dispatchEvent(fired);
        }""",
        [event, target, name, base64.b64encode(data).decode(), media_type, pad],
    )


def test_upload_a_file_and_send_images(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script = use_script(fake_server)
    script.turn("I read your notes and looked at both pictures.")
    notes = tmp_path / "trip notes.txt"
    notes.write_text("Flight at 9:40 from gate B12.\n")
    chosen, pasted, dropped = png("red"), png("blue"), png("green", (10, 10))
    (tmp_path / "photo.png").write_bytes(chosen)

    open_app(page)
    page.locator("#file-input").set_input_files([str(notes), str(tmp_path / "photo.png")])
    sid = session_id(page)  # attaching a file started a conversation to hold it
    chips = page.locator("#attachments .chip")
    expect(chips.filter(has_text="trip notes.txt")).to_have_count(1)
    expect(chips.filter(has_text="uploading")).to_have_count(0)
    put_files(page, "paste", "#input", "clipboard.png", pasted, "image/png")
    expect(chips.locator("img")).to_have_count(2)
    put_files(page, "drop", ".main", "dropped.png", dropped, "image/png")
    expect(chips.locator("img")).to_have_count(3)
    chips.filter(has_text="photo.png").get_by_role("button").click()  # changed my mind about this one
    expect(chips.locator("img")).to_have_count(2)
    stored = Path(navi.settings.session_files_dir) / sid / "trip notes.txt"
    assert stored.read_text() == "Flight at 9:40 from gate B12.\n"

    send(page, "What do you make of these?")
    wait_idle(page)
    expect(chips).to_have_count(0)
    bubble = page.locator("article.msg.user")
    expect(bubble.locator(".bubble")).to_have_text("What do you make of these?")
    expect(bubble.locator(".images img")).to_have_count(2)
    expect(bubble.locator(".files .chip")).to_have_text("trip notes.txt")
    expect(page.locator("article.turn .markdown.text")).to_have_text(
        "I read your notes and looked at both pictures."
    )

    # What the model was sent: the text, the file's path on disk, both images as base64.
    asked = script.of_kind("turn")[0].messages[-1]
    assert asked.role == "user" and (asked.content or "").startswith("What do you make of these?")
    assert "[Uploaded files on disk:" in (asked.content or "") and str(stored.name) in (asked.content or "")
    assert asked.images == [base64.b64encode(pasted).decode(), base64.b64encode(dropped).decode()]

    # Read back: the same bubble, with the images and the file, not the appended path text.
    reload(page)
    bubble = page.locator("article.msg.user")
    expect(bubble.locator(".bubble")).to_have_text("What do you make of these?")
    expect(bubble.locator(".files .chip")).to_have_text("trip notes.txt")
    sources = bubble.locator(".images img").evaluate_all("(imgs) => imgs.map((i) => i.src)")
    assert sources == [f"data:image/png;base64,{base64.b64encode(p).decode()}" for p in (pasted, dropped)]
    assert bubble.locator(".images img").first.evaluate("(img) => img.naturalWidth") == 24


def test_refused_uploads_are_explained_and_nothing_is_lost(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script = use_script(fake_server)
    script.turn("Fine.")
    script_file = tmp_path / "install.sh"
    script_file.write_text("#!/bin/sh\nrm -rf /\n")
    open_app(page)
    page.locator("#input").fill("Keep this text")
    page.locator("#file-input").set_input_files(str(script_file))
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("install.sh was not uploaded")
    expect(page.locator("#attachments .chip")).to_have_count(0)
    expect(page.locator("#input")).to_have_value("Keep this text")
    sid = session_id(page)
    assert not (Path(navi.settings.session_files_dir) / sid / "install.sh").exists()

    # An image too large to send inline is refused before anything is sent.
    put_files(page, "paste", "#input", "huge.png", png("white"), "image/png", pad=11 * 1024 * 1024)
    expect(toast).to_contain_text("larger than 10 MB")
    expect(page.locator("#attachments .chip")).to_have_count(0)
    send(page, "Keep this text")
    wait_idle(page)
    assert script.of_kind("turn")[0].messages[-1].images == []


def test_a_refused_upload_says_so_in_one_line_with_the_accepted_kinds_behind_a_link(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    open_app(page)
    page.locator("#file-input").set_input_files(
        files=[{"name": "setup.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90\x00"}]
    )
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("setup.exe was not uploaded: files of type .exe are not accepted.")
    more = toast.get_by_text("which files?")
    expect(more).to_be_visible()
    kinds = toast.locator(".toast-more-text")
    expect(kinds).to_be_hidden()  # the list of accepted kinds waits behind the link
    box = toast.bounding_box()
    assert box is not None and box["height"] < 50, box  # one line, not five over the page
    more.click()
    expect(kinds).to_be_visible()
    expect(kinds).to_contain_text("Navi accepts only files the model can read")
    expect(kinds).to_contain_text(".pdf")
    page.wait_for_timeout(8_500)  # opened, it stays up past the usual 8 s
    expect(toast).to_be_visible()
