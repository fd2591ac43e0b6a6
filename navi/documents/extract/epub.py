"""EPUB, read from its zip with lxml (ebooklib is AGPL): META-INF/container.xml names the OPF
package file; its spine lists the chapters in reading order, each an XHTML file read like HTML.
Place.page is the chapter's order in the spine (1-based), with the chapter's headings."""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import unquote

from navi.documents.base import Extracted, ExtractionError, Place, Section
from navi.documents.extract.common import Budget, open_zip, read_member
from navi.documents.extract.web import sections_of

CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF = "http://www.idpf.org/2007/opf"
DC = "http://purl.org/dc/elements/1.1/"
# Font obfuscation is "encryption" of fonts only, not of the text.
FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import lxml.etree

    archive = open_zip(data, budget.limits, "EPUB")
    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True, recover=True)

    def xml(member: str) -> Any:
        root = lxml.etree.fromstring(read_member(archive, member, "EPUB"), parser)
        if root is None:
            raise ExtractionError("corrupt", f"the EPUB's {member} is not XML")
        return root

    container = xml("META-INF/container.xml")
    rootfile = container.find(f".//{{{CONTAINER}}}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise ExtractionError("corrupt", "the EPUB names no package file (META-INF/container.xml)")
    opf_path = rootfile.get("full-path")
    package = xml(opf_path)
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): posixpath.normpath(posixpath.join(base, unquote(item.get("href", "").split("#")[0])))
        for item in package.iter(f"{{{OPF}}}item")
        if item.get("id") and item.get("href")
    }
    spine = [
        manifest[ref.get("idref")]
        for ref in package.iter(f"{{{OPF}}}itemref")
        if ref.get("idref") in manifest
    ]
    _refuse_drm(archive, xml, set(spine))
    budget.check_pages(len(spine), "chapters")
    title_element = package.find(f".//{{{DC}}}title")
    title = " ".join((title_element.text or "").split()) or None if title_element is not None else None
    names = set(archive.namelist())
    sections: list[Section] = []
    for order, member in enumerate(spine, start=1):
        if budget.full:
            break
        if member in names:
            found, _ = sections_of(read_member(archive, member, "EPUB"), budget, Place(page=order), xml=True)
            sections.extend(found)
        budget.progress(order, len(spine))
    return Extracted("epub", sections, pages=len(spine), title=title)


def _refuse_drm(archive: Any, xml: Any, spine: set[str]) -> None:
    if "META-INF/encryption.xml" not in archive.namelist():
        return
    for data in xml("META-INF/encryption.xml").iter("{*}EncryptedData"):
        method = data.find("{*}EncryptionMethod")
        algorithm = method.get("Algorithm", "") if method is not None else ""
        reference = data.find(".//{*}CipherReference")
        uri = posixpath.normpath(unquote(reference.get("URI", ""))) if reference is not None else ""
        if algorithm not in FONT_OBFUSCATION and (uri in spine or uri.endswith((".xhtml", ".html", ".htm"))):
            raise ExtractionError("encrypted", "the EPUB is protected by DRM; Navi cannot read its text")
