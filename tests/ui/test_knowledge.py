"""Documents on the page (issue 43): a PDF uploaded into a conversation shows its indexing state on
its chip (queued, indexing with a progress bar) and on the chip of a message sent before it is
ready, until it is; then the answer's citation "(contract.pdf, p. 3)" is a link to the document's
page (/documents/{id}/file#page=3, served as a PDF). The Knowledge panel makes and deletes
collections, adds files (chosen or dropped, a folder's files without its hidden ones), shows each
document's state (a broken one failed, with the reason), searches every document (a hit opens its
passage) and attaches a collection to the conversation, whose answers then cite it; a citation of
a document that is not a PDF opens its passage in an overlay; on a phone the panel fits the screen."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
from fpdf import FPDF
from playwright.sync_api import BrowserContext, Page, Route, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import Watched, open_app, send, session_id, wait_idle
from tests.ui.test_phone import no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.navi(planning_enabled=False)]

TERMINATION = "Either party may end this contract with ninety days notice in writing."
PAGES = [
    "Contract between Ana Lopes and Acme Lda. This page names the parties.",
    "Payment is due within thirty days of each invoice.",
    TERMINATION,
    "Disputes go to the courts of Porto.",
]


def contract_pdf() -> bytes:
    """A four-page PDF whose page 3 (and only it) says how the contract ends."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in PAGES:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


# Every state a chip or row showed, in order (recorded in the page from before the upload on).
RECORD_STATES = """(selector) => {
  window.seenStates = [];
  const note = () => {
    for (const n of document.querySelectorAll(selector)) {
      const bar = n.querySelector("progress");
      const seen = `${n.dataset.state}${bar ? ":bar" : ""}`;
      if (window.seenStates.at(-1) !== seen) window.seenStates.push(seen);
    }
  };
  new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def test_a_pdf_in_a_conversation_is_indexed_then_cited_at_its_page(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script = use_script(fake_server)
    script.turn(
        "You can end it with ninety days notice (contract.pdf, p. 3). "
        "A file that is not here stays text (other.pdf, p. 2)."
    )
    pdf = tmp_path / "contract.pdf"
    pdf.write_bytes(contract_pdf())

    # The document's state as the page reads it is held at "indexing, half done" until released,
    # so what the page shows meanwhile is seen whatever the indexer's speed.
    held = {"on": True}

    def hold(route: Route) -> None:
        real = route.fetch()
        body = real.json()
        for doc in body if isinstance(body, list) else [body]:  # one document, or a list of them
            if held["on"] and isinstance(doc, dict) and doc.get("state") == "ready":
                doc.update(state="indexing", progress=0.5, pages=0, chunks=0)
        route.fulfill(response=real, json=body)

    page.route(re.compile(r".*/documents(/[0-9a-f]+|\?[^/]*)$"), hold)
    open_app(page)
    page.evaluate(RECORD_STATES, "#attachments .chip .doc-state")
    page.locator("#file-input").set_input_files(str(pdf))
    sid = session_id(page)
    chip = page.locator("#attachments .chip").filter(has_text="contract.pdf")
    state = chip.locator(".doc-state")
    expect(state).to_have_text("indexing 50%", timeout=60_000)
    assert state.locator("progress").evaluate("(bar) => bar.value") == 0.5
    expect(state.locator("progress")).to_have_accessible_name("Indexing contract.pdf")

    # Sent before it is ready: the message's chip keeps showing the state; the answer's citation
    # waits for the document too.
    send(page, "How can I end the contract?")
    wait_idle(page)
    sent = page.locator("article.msg.user .files .chip")
    expect(sent.locator(".doc-state")).to_have_text("indexing 50%")
    answer = page.locator("article.turn .markdown.text")
    expect(answer).to_contain_text("(contract.pdf, p. 3)")
    expect(answer.locator("a.citation")).to_have_count(0)
    seen = page.evaluate("() => window.seenStates")
    assert seen[0] == "queued:bar" and seen[-1] == "indexing:bar", seen  # waiting, then read, with a bar

    held["on"] = False  # ready: the state goes from the message, and the citation becomes a link
    expect(sent.locator(".doc-state")).to_have_count(0)
    link = answer.locator("a.citation")
    expect(link).to_have_count(1)  # other.pdf is no document here: its "citation" stays text
    expect(link).to_have_text("contract.pdf, p. 3")
    assert page.locator("article.turn a.citation").count() == 1
    with navi.client() as http:
        docs = [
            d
            for c in http.get(f"/sessions/{sid}/collections").json()
            for d in http.get("/documents", params={"collection": c["id"]}).json()
        ]
    [doc] = [d for d in docs if d["name"] == "contract.pdf"]
    href = f"/documents/{doc['id']}/file#page=3"
    expect(link).to_have_attribute("href", href)
    expect(link).to_have_attribute("target", "_blank")

    # Following it opens the PDF (the browser's viewer goes to #page=3), served as a PDF.
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    assert tab.url == f"{navi.url}{href}"
    tab.close()
    served = page.request.get(href)
    assert served.ok and served.headers["content-type"].startswith("application/pdf")
    assert served.body() == pdf.read_bytes()

    # The panel lists it in this conversation's own collection, ready, with its pages.
    page.get_by_role("button", name="Knowledge").click()
    own = page.locator("#collection-list li.collection").first
    expect(own.locator(".collection-name")).to_have_text("This conversation's files")
    expect(own.get_by_role("checkbox")).to_be_checked()
    expect(own.get_by_role("checkbox")).to_be_disabled()
    expect(page.locator("#document-list li.document .doc-state")).to_have_text("ready · 4 pages · 4 chunks")


def drop(page: Page, target: str, files: dict[str, str]) -> None:
    """Drop files (name → text) on an element, as the browser delivers a drop."""
    page.evaluate(
        """([target, files]) => {
            const transfer = new DataTransfer();
            for (const [name, b64] of Object.entries(files)) {
              const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
              transfer.items.add(new File([bytes], name, { type: "text/plain" }));
            }
            const init = { bubbles: true, cancelable: true, dataTransfer: transfer };
            document.querySelector(target).dispatchEvent(new DragEvent("drop", init));
        }""",
        [target, {n: base64.b64encode(t.encode()).decode() for n, t in files.items()}],
    )


# A folder as webkitGetAsEntry gives it (a script cannot make a real one): its files, a hidden file
# and a hidden folder, a subfolder, and more entries than one readEntries() batch.
FOLDER_DROP = """async () => {
  const { droppedFiles } = await import("/static/js/docstate.js");
  const file = (name) => ({ name, isFile: true, isDirectory: false,
    file: (ok) => ok(new File(["x"], name)) });
  const dir = (name, children) => ({ name, isFile: false, isDirectory: true, createReader: () => {
    const batches = [children.slice(0, 2), children.slice(2), []];
    return { readEntries: (ok) => ok(batches.shift() || []) };
  } });
  const root = dir("notes", [file("a.md"), file(".secret.md"), dir("trips", [file("b.md")]),
    dir(".obsidian", [file("c.md")]), file("d.txt")]);
  const transfer = { items: [{ kind: "file", webkitGetAsEntry: () => root }], files: [] };
  return (await droppedFiles(transfer)).map((f) => f.name);
}"""


def test_the_knowledge_panel_collections_files_search_and_attaching(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script = use_script(fake_server)
    script.turn("Noted.")
    script.turn("Pack the passports first (packing.md, § Before leaving).")
    packing = tmp_path / "packing.md"
    packing.write_text(
        "# Trip\n\n## Before leaving\n\nPack the passports and the zeppelin tickets.\n\n"
        "## On the way\n\nBuy water at the station.\n"
    )
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "collections" in r.url else None)
    open_app(page)
    assert page.evaluate(FOLDER_DROP) == ["a.md", "b.md", "d.txt"]  # hidden files and folders left out
    send(page, "Hello")
    wait_idle(page)
    sid = session_id(page)
    assert asked == []  # an answer that cites nothing costs no reading of the documents

    page.get_by_role("button", name="Knowledge").click()
    dialog = page.get_by_role("dialog", name="Knowledge")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("searchbox", name="Search your documents")).to_be_focused()

    # A collection, made and chosen; a file added from the picker and two dropped on the panel.
    name = dialog.get_by_label("New collection's name")
    name.fill("Travel <b>2026</b>")
    name.press("Enter")
    row = dialog.locator("li.collection").filter(has_text="Travel <b>2026</b>")  # text, not markup
    expect(row).to_have_count(1)
    expect(dialog.locator("li.collection b")).to_have_count(0)
    expect(dialog.locator("#documents-heading")).to_have_text("Documents in Travel <b>2026</b>")
    dialog.get_by_label("Add files").set_input_files(str(packing))
    status = dialog.locator("#knowledge-status")
    expect(status).to_have_text("Added 1 file to Travel <b>2026</b>.")
    drop(
        page,
        "#knowledge",
        {"visa.txt": "The visa costs forty euros.", ".DS_Store": "junk", "broken.pdf": "%PDF-1.7 cut"},
    )
    docs = dialog.locator("li.document")
    names = ["broken.pdf", "packing.md", "visa.txt"]
    expect(docs).to_have_count(3)
    assert sorted(docs.locator(".document-name").all_inner_texts()) == names
    for file_name in names:
        expect(docs.filter(has_text=file_name)).to_have_attribute(
            "data-state", "failed" if file_name == "broken.pdf" else "ready", timeout=60_000
        )
    expect(docs.filter(has_text="packing.md").locator(".doc-state")).to_have_text(
        "ready · 3 chunks"
    )  # one per heading
    broken = docs.filter(has_text="broken.pdf").locator(".doc-state")
    expect(broken).to_contain_text("failed: ")  # with the reason
    assert len(broken.inner_text()) > len("failed: ") + 5
    expect(row.locator(".collection-meta")).to_have_text("3 documents")
    expect(status).to_have_text("Added 2 files to Travel <b>2026</b>.")  # said after its last reading
    assert page.locator("#attachments .chip").count() == 0  # the drop went to the panel, not the message
    # Nothing is queued or indexing any more: the list is not read again.
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/documents?collection=" in r.url else None)
    page.wait_for_timeout(1500)
    assert polls == []

    # Re-indexed (read again: queued, then failed again with its reason); deleted after a confirm.
    with navi.client() as http:
        before = {d["name"]: d for d in http.get("/documents").json()}["broken.pdf"]
    docs.filter(has_text="broken.pdf").get_by_role("button", name="Re-index broken.pdf").click()
    expect(status).to_have_text("broken.pdf is read again.")
    expect(docs.filter(has_text="broken.pdf")).to_have_attribute("data-state", "failed", timeout=60_000)
    with navi.client() as http:
        after = {d["name"]: d for d in http.get("/documents").json()}["broken.pdf"]
    assert after["state"] == "failed" and after["updated_at"] != before["updated_at"]
    docs.filter(has_text="visa.txt").get_by_role("button", name="Delete visa.txt").click()
    page.get_by_role("dialog", name="Delete visa.txt?").get_by_role("button", name="Delete").click()
    expect(docs).to_have_count(2)
    expect(row.locator(".collection-meta")).to_have_text("2 documents")

    # Search across documents: a hit with its citation; a hit that is not a PDF opens its passage.
    search = dialog.get_by_role("searchbox", name="Search your documents")
    search.fill("zeppelin tickets")
    hits = dialog.locator("#knowledge-hits .doc-hit")
    expect(hits.first.locator(".hit-citation")).to_have_text("packing.md, § Before leaving")
    expect(hits.first.locator(".hit-text")).to_contain_text("Pack the passports and the zeppelin tickets.")
    hits.first.locator(".hit-citation").click()
    passage = page.get_by_role("dialog", name="packing.md, § Before leaving")
    expect(passage.locator(".passage-text")).to_contain_text("zeppelin tickets")
    page.keyboard.press("Escape")
    expect(passage).to_have_count(0)
    expect(dialog).to_be_visible()  # Escape closed the overlay only

    # Attached to the conversation: the server says so, and its answers cite it as links.
    use = dialog.get_by_label("Use Travel <b>2026</b> in this conversation")
    expect(use).not_to_be_checked()
    use.check()
    expect(row).to_have_class("collection chosen attached")
    with navi.client() as http:
        attached = [c["name"] for c in http.get(f"/sessions/{sid}/collections").json()]
    assert "Travel <b>2026</b>" in attached
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    send(page, "What do I pack first?")
    wait_idle(page)
    cite = page.locator("article.turn .markdown.text a.citation")
    expect(cite).to_have_text("packing.md, § Before leaving")
    cite.click()  # not a PDF: the passage, in the overlay
    passage = page.get_by_role("dialog", name="packing.md, § Before leaving")
    expect(passage.locator(".passage-text")).to_contain_text("Pack the passports")
    page.keyboard.press("Escape")

    # Detached, then deleted after a confirm.
    page.get_by_role("button", name="Knowledge").click()
    use.uncheck()
    expect(row).not_to_have_class("collection chosen attached")
    with navi.client() as http:
        attached = [c["name"] for c in http.get(f"/sessions/{sid}/collections").json()]
    assert "Travel <b>2026</b>" not in attached

    # Attached to the conversation's profile instead: read here through it (said, not a choice here).
    with navi.client() as http:
        pid = http.get(f"/sessions/{sid}").json()["profile_id"]
        pname = {p["id"]: p["name"] for p in http.get("/agents/profiles").json()}[pid]
    by_profile = dialog.get_by_label(f"Read Travel <b>2026</b> in every conversation with {pname}")
    expect(by_profile).not_to_be_checked()
    by_profile.check()
    expect(status).to_have_text(f"Every conversation with {pname} reads Travel <b>2026</b> now.")
    expect(use).to_be_checked()
    expect(use).to_be_disabled()
    with navi.client() as http:
        (shelf,) = [c for c in http.get("/collections").json() if c["name"] == "Travel <b>2026</b>"]
        assert shelf["profiles"] == [pid]
        assert "Travel <b>2026</b>" in [c["name"] for c in http.get(f"/sessions/{sid}/collections").json()]
    by_profile.uncheck()
    expect(status).to_have_text(f"Conversations with {pname} no longer read Travel <b>2026</b>.")
    expect(use).not_to_be_checked()
    expect(use).to_be_enabled()
    row.get_by_role("button", name="Delete collection Travel <b>2026</b>").click()
    confirm = page.get_by_role("dialog", name="Delete Travel <b>2026</b>?")
    confirm.get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    with navi.client() as http:
        assert "Travel <b>2026</b>" not in [c["name"] for c in http.get("/collections").json()]


def test_the_panel_on_a_phone(phone: tuple[BrowserContext, Watched], navi: LiveNavi) -> None:
    with navi.client() as http:
        made = http.post("/collections", json={"name": "Recipes from my grandmother's kitchen notebook"})
        assert made.status_code == 201, made.text
        cid = made.json()["id"]
        for name in ("soup.md", f"{'grandmothers_vegetable_soup_' * 4}.md"):  # long, unbroken
            files = {"file": (name, io.BytesIO(b"# Soup\n\nA long line of text about soup. " * 20))}
            assert http.post(f"/collections/{cid}/documents", files=files).status_code == 202
    context, _ = phone
    page = open_app(context.new_page())
    page.get_by_role("button", name="Show conversations").tap()
    page.locator("#open-knowledge").tap()
    dialog = page.get_by_role("dialog", name="Knowledge")
    expect(dialog).to_be_visible()
    expect(page.locator("#sidebar")).not_to_have_class("sidebar open")
    expect(dialog.locator("li.document")).to_have_count(2)
    no_sideways_scroll(page, "the knowledge panel")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
