"""Which uploads Navi takes: only files the model can read, and none that runs or renders.

Uploads land in a folder the agent's tools read, and the user may open them again later. So what is
accepted is an allowlist of the kinds the model can use (`KINDS`):

- **text**, read by the `filesystem` tool: plain text, Markdown and reStructuredText, CSV/TSV,
  JSON, YAML, TOML, INI and config files, logs, diffs — and a name without an extension whose
  content is text;
- **images**, looked at with `image_view`: PNG, JPEG, GIF, WebP, BMP, TIFF;
- **documents**, read through `code_exec`: PDF, Office Open XML (`.docx`, `.xlsx`, `.pptx`) and
  OpenDocument (`.odt`, `.ods`, `.odp`) files.

Everything else is refused (415), naming the kinds accepted: source code and scripts (`.py`, `.js`,
`.jsp`…), pages and pictures that render and can run script when opened (`.html`, `.xhtml`,
`.svg`, `.xml`), packages and installers (`.whl`, `.deb`, `.msi`…), launchers and units
(`.desktop`, `.service`…), archives (which could hold any of these), documents with macros
(`.docm`, `.xlsm`). The extension must be plain ASCII: a look-alike (`.pу` with a Cyrillic у)
is refused, not mapped to what it resembles. The other suffixes of a name are checked too
(`report.sh.txt` is refused: some tools look at more than the last one).

The content must be what the name says, and no program whatever the name:

- programs: ELF, Windows PE (`MZ`), Mach-O, Java class files, Dalvik, Debian and RPM packages; an
  interpreter line (`#!`) or `<?php` at the start (after a byte-order mark or white space, in
  UTF-8, UTF-16 or UTF-32); Windows and internet shortcuts; desktop entries; HTML, SVG and XHTML
  documents;
- zip-based programs, wherever the zip starts (a zip can be appended to an image): Java archives,
  Android packages, Python zip applications; Office and OpenDocument files with macros;
- kinds: text has no NUL bytes (unless UTF-16/32 with a byte-order mark), an image starts with an
  image format's signature, a PDF with `%PDF-`, an Office or OpenDocument file is that kind of zip.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
import zipfile
from pathlib import Path

SNIFF_BYTES = 4096  # how much of the start of a file the content checks read

TEXT_EXTENSIONS = (
    *(".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".jsonl", ".ndjson"),
    *(".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".log", ".diff", ".patch"),
)
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
DOCUMENT_EXTENSIONS = (".pdf", ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp")
KINDS = {"text": TEXT_EXTENSIONS, "images": IMAGE_EXTENSIONS, "documents": DOCUMENT_EXTENSIONS}
ALLOWED_EXTENSIONS = frozenset(e for kind in KINDS.values() for e in kind)

# Suffixes refused anywhere in a name, not only at its end: what runs or renders.
REFUSED_SUFFIXES = frozenset(
    {
        *(".sh", ".bash", ".zsh", ".csh", ".ksh", ".fish", ".command", ".run", ".py", ".pyw", ".pyz"),
        *(".pl", ".rb", ".lua", ".php", ".phtml", ".cgi", ".js", ".mjs", ".cjs", ".vbs", ".ps1"),
        *(".jsp", ".jspx", ".asp", ".aspx", ".html", ".htm", ".xhtml", ".xht", ".shtml", ".svg"),
        *(".exe", ".com", ".bat", ".cmd", ".scr", ".pif", ".msi", ".dll", ".so", ".jar", ".apk"),
        *(".deb", ".rpm", ".whl", ".appimage", ".desktop", ".service", ".lnk", ".url", ".hta"),
    }
)

_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")
_MAGIC = {
    b"\x7fELF": "an ELF executable",
    b"MZ": "a Windows executable",
    b"\xfe\xed\xfa\xce": "a Mach-O executable",
    b"\xfe\xed\xfa\xcf": "a Mach-O executable",
    b"\xce\xfa\xed\xfe": "a Mach-O executable",
    b"\xcf\xfa\xed\xfe": "a Mach-O executable",
    b"\xca\xfe\xba\xbe": "a Mach-O universal binary or Java class",
    b"dex\n": "an Android (Dalvik) executable",
    b"!<arch>\ndebian-binary": "a Debian package",
    b"\xed\xab\xee\xdb": "an RPM package",
    b"L\x00\x00\x00\x01\x14\x02\x00": "a Windows shortcut",
}
_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_TEXT_STARTS = (
    ("#!", "a script with an interpreter line"),
    ("<?php", "a PHP script"),
    ("[internetshortcut]", "an internet shortcut"),
    ("<!doctype html", "an HTML page"),
    ("<html", "an HTML page"),
    ("<svg", "an SVG picture (it can run script when opened)"),
)
_DESKTOP_ENTRY = re.compile(r"^\s*\[desktop entry\]\s*$", re.M)
_RENDERED_XML = re.compile(r"<svg[\s>]|<html[\s>]|http://www\.w3\.org/1999/xhtml")
_ZIP_PROGRAMS = (
    ("META-INF/MANIFEST.MF", "a Java archive"),
    ("AndroidManifest.xml", "an Android package"),
    ("classes.dex", "an Android package"),
    ("__main__.py", "a Python zip application"),
)
_OOXML = (".docx", ".xlsx", ".pptx")
_ODF = (".odt", ".ods", ".odp")
REFUSED = "files that run or render when opened are refused"


def accepted_kinds() -> str:
    """The kinds Navi takes, for a refusal's message."""
    parts = [f"{kind} ({' '.join(exts)})" for kind, exts in KINDS.items()]
    return f"Navi accepts only files the model can read: {', '.join(parts)}; text may have no extension"


def _split(name: str) -> tuple[list[str], str]:
    """(the name's inner suffixes, its extension): `report.sh.txt` → ([".sh"], ".txt"). A part
    after a dot that holds white space is words, not a type: `Mr. Smith letter` has no extension
    (""), and `notes.v2.txt` has the inner suffix `.v2`."""
    parts = name.lstrip(".").split(".")[1:]
    words = [f".{p}" for p in parts if p and not any(ch.isspace() for ch in p)]
    last = parts[-1] if parts else ""
    if last and not any(ch.isspace() for ch in last):
        return words[:-1], f".{last}"
    return words, ""


def extension_reason(name: str) -> str | None:
    """Why the name alone refuses the file, or None (a name without an extension is judged by
    its content: it must be text)."""
    inner, ext = _split(name)
    for suffix in inner:
        plain = unicodedata.normalize("NFKC", suffix).lower()
        if plain in REFUSED_SUFFIXES:
            return f"files of type {plain} are not accepted ({REFUSED}). {accepted_kinds()}"
    if not ext:
        return None
    if not ext.isascii():
        return (
            f"files of type {ext} are not accepted: an extension must be plain ASCII letters and "
            f"digits (this one has look-alike characters). {accepted_kinds()}"
        )
    if ext.lower() not in ALLOWED_EXTENSIONS:
        return f"files of type {ext.lower()} are not accepted. {accepted_kinds()}"
    return None


def _leading_text(head: bytes) -> str:
    """The start of `head` as text, after any byte-order mark; lower case, leading space removed."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if head.startswith(bom):
            head, encoding = head[len(bom) :], name
            break
    width = 4 if "32" in encoding else 2 if "16" in encoding else 1
    head = head[: len(head) - len(head) % width]
    return head.decode(encoding, errors="replace").lstrip(" \t\r\n\f\v\ufeff").lower()


def program_reason(head: bytes) -> str | None:
    """What program (an executable, a package, a shortcut) the first bytes of a file show, if any:
    refused whatever the upload is for, even where text that renders is taken as a document."""
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            return what
    return None


def content_reason(head: bytes) -> str | None:
    """What the first `SNIFF_BYTES` of a file show it to be, if it runs or renders when opened."""
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            return what
    text = _leading_text(head)
    for start, what in _TEXT_STARTS:
        if text.startswith(start):
            return what
    if text.startswith("<?xml") and _RENDERED_XML.search(text):
        return "an SVG or XHTML document (it can run script when opened)"
    if _DESKTOP_ENTRY.search(text):
        return "a desktop entry (a launcher)"
    return None


def _zip_names(path: Path) -> set[str] | None:
    """The member names (lower case) of the zip in `path`, wherever it starts; None if none.
    Only the zip's directory is read, never its contents."""
    try:
        if not zipfile.is_zipfile(path):
            return None
        with zipfile.ZipFile(path) as archive:
            return {n.lower() for n in archive.namelist()}
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return None  # not a readable zip: nothing can run it as one either


def zip_reason(path: Path) -> str | None:
    """What a zip-based program (or macro-carrying document) `path` is, if it is one."""
    names = _zip_names(path)
    if names is None:
        return None
    for member, what in _ZIP_PROGRAMS:
        if member.lower() in names:
            return what
    if any(n.endswith("vbaproject.bin") or n.startswith("basic/") for n in names):
        return "a document with macros"
    return None


def _is_text(head: bytes) -> bool:
    if any(head.startswith(bom) for bom, name in _BOMS if "16" in name or "32" in name):
        return True  # UTF-16/32 text holds NUL bytes
    return b"\x00" not in head


def kind_reason(name: str, head: bytes, path: Path) -> str | None:
    """Why the content is not the kind the name says, or None. `head` is the file's start,
    `path` the whole file (zip-based documents are checked by their directory)."""
    ext = _split(name)[1].lower()
    if ext in IMAGE_EXTENSIONS:
        ok = head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
        return None if ok else f"{name} is not an image (its content does not start like one)"
    if ext == ".pdf":
        return None if b"%PDF-" in head[:1024] else f"{name} is not a PDF (it does not start with %PDF-)"
    if ext in _OOXML or ext in _ODF:
        names = _zip_names(path) or set()
        marker = "[content_types].xml" if ext in _OOXML else "mimetype"
        return None if marker in names else f"{name} is not an {ext} document (not that kind of zip)"
    if not _is_text(head):
        what = f"its name says {ext}" if ext else "a file without an extension must be text"
        return f"{name} is not text ({what}, but it holds binary data)"
    return None


def executable_reason(name: str, head: bytes) -> str | None:
    """Why `name` with content starting `head` is refused by its name or as a program, or None."""
    if reason := extension_reason(name):
        return reason
    if what := content_reason(head):
        return f"{name} is {what}; {REFUSED}"
    return None
