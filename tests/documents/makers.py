"""Real documents for the extraction tests, each made by its own library (fpdf2, python-docx,
openpyxl, python-pptx, the standard library's email and zipfile) or, for OpenDocument and EPUB,
zipped by hand as their specifications lay them out."""

from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage

import docx
import fpdf
import openpyxl
import pptx


def pdf(
    pages: dict[int, str],
    *,
    count: int,
    sections: dict[int, str] | None = None,
    password: str | None = None,
    title: str | None = None,
) -> bytes:
    """A PDF of `count` pages; page n carries pages[n] (others are blank: no text layer), and a
    bookmark sections[n] starts on page n."""
    document = fpdf.FPDF()
    document.set_font("helvetica", size=12)
    if title:
        document.set_title(title)
    if password:
        document.set_encryption(owner_password="owner-" + password, user_password=password)
    for number in range(1, count + 1):
        document.add_page()
        if sections and number in sections:
            document.start_section(sections[number])
        if number in pages:
            document.multi_cell(0, 8, pages[number])
    return bytes(document.output())


def save(thing: object) -> bytes:
    buffer = io.BytesIO()
    thing.save(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()


def contract_docx() -> bytes:
    document = docx.Document()
    document.core_properties.title = "Service contract"
    document.add_heading("Service contract", level=0)
    document.add_paragraph("This contract is between Ada and Navi Ltd.")
    document.add_heading("Obligations", level=1)
    document.add_paragraph("Navi Ltd answers questions about documents.")
    document.add_heading("Payment", level=2)
    document.add_paragraph("Invoices are paid within 30 days.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Price"
    table.cell(1, 0).text, table.cell(1, 1).text = "Hosting", "12 EUR"
    document.add_heading("Termination", level=1)
    document.add_paragraph("Either party may terminate with ninety days notice.")
    return save(document)


def budget_xlsx() -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Budget"
    sheet.append(["Item", "Q1", "Q2", "Q3", "Q4", "Owner"])
    for row in range(2, 41):
        sheet.append([f"line {row}", row, row * 2, row * 3, row * 4, "Ada"])
    sheet["C25"] = "espresso machine"
    other = workbook.create_sheet("Notes")
    other["B3"] = "Remember the auditors"
    return save(workbook)


def deck_pptx() -> bytes:
    presentation = pptx.Presentation()
    for title, body in (
        ("Welcome", "Hello everyone"),
        ("Roadmap", "Ship documents in the third quarter"),
        ("Questions", "Ask anything"),
    ):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    presentation.slides[1].notes_slide.notes_text_frame.text = "Mention the beta testers"
    return save(presentation)


ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
    'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
)
ODF_TYPES = {
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
}


def odf(kind: str, body: str, *, title: str = "An OpenDocument", encrypted: bool = False) -> bytes:
    """An OpenDocument package: mimetype stored first, then content, meta and manifest."""
    mimetype = ODF_TYPES[kind]
    tag = {"odt": "text", "ods": "spreadsheet", "odp": "presentation"}[kind]
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS} office:version="1.3">'
        f"<office:body><office:{tag}>{body}</office:{tag}></office:body></office:document-content>"
    )
    meta = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {ODF_NS}><office:meta>'
        f"<dc:title>{title}</dc:title></office:meta></office:document-meta>"
    )
    encryption = '<manifest:encryption-data manifest:checksum-type="SHA1/1K"/>' if encrypted else ""
    manifest = (
        f'<?xml version="1.0" encoding="UTF-8"?><manifest:manifest {ODF_NS}>'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mimetype}"/>'
        f'<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">{encryption}'
        "</manifest:file-entry></manifest:manifest>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", mimetype, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("meta.xml", meta, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def epub(chapters: list[tuple[str, str]], *, title: str = "A Small Book", drm: bool = False) -> bytes:
    """An EPUB 3: container.xml → OEBPS/content.opf, whose spine lists the chapters (heading, text)
    in reverse file order, so reading order must come from the spine, not the file names."""
    buffer = io.BytesIO()
    items, refs = [], []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        for order, (heading, text) in enumerate(chapters, start=1):
            file = f"text/part{len(chapters) - order + 1:02d}.xhtml"
            archive.writestr(
                f"OEBPS/{file}",
                '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
                f"<title>{heading}</title></head><body><h1>{heading}</h1><p>{text}</p></body></html>",
            )
            items.append(f'<item id="c{order}" href="{file}" media-type="application/xhtml+xml"/>')
            refs.append(f'<itemref idref="c{order}"/>')
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
            'unique-identifier="id">'
            f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
            f"<manifest>{''.join(items)}</manifest><spine>{''.join(refs)}</spine></package>",
        )
        if drm:
            archive.writestr(
                "META-INF/encryption.xml",
                '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
                '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
                '<enc:CipherData><enc:CipherReference URI="OEBPS/text/part01.xhtml"/></enc:CipherData>'
                "</enc:EncryptedData></encryption>",
            )
    return buffer.getvalue()


def mail(*, html: bool = False) -> bytes:
    message = EmailMessage()
    message["From"] = "Ada <ada@example.org>"
    message["To"] = "navi@example.org"
    message["Subject"] = "Quarterly numbers"
    message["Date"] = "Mon, 07 Dec 2026 09:00:00 +0000"
    message.set_content("Hi Navi,\n\nthe revenue grew by 12 percent this quarter.\n\nAda")
    if html:
        message.add_alternative(
            "<html><body><p>the revenue grew by <b>12 percent</b></p></body></html>", subtype="html"
        )
    message.add_attachment(
        b"%PDF-1.4 not really", maintype="application", subtype="pdf", filename="report.pdf"
    )
    return bytes(message)


def zip_bomb_docx(member_bytes: int) -> bytes:
    """A DOCX whose zip directory is honest about a member of `member_bytes` zeros (deflated to
    about a thousandth of that), streamed into the archive in 1 MB blocks."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<document/>")
        block = bytes(1 << 20)
        with archive.open("word/media/padding.bin", "w", force_zip64=True) as member:
            for _ in range(member_bytes // len(block)):
                member.write(block)
    return buffer.getvalue()
