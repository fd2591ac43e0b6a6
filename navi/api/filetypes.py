"""What counts as a program among uploaded files: by name, and by content whatever the name.

Uploads land in a folder the agent's tools can reach, so a file that would run when opened,
installed or passed to an interpreter is refused (415). The name is checked for every suffix
(`report.sh.txt` is refused: some tools look at more than the last one), the content by its
signature, so renaming a script does not get it through:

- executables: ELF, Windows PE (`MZ`), Mach-O (thin and universal), Java class files, Dalvik
  (`dex`), Debian (`!<arch>` with `debian-binary`) and RPM packages;
- scripts: an interpreter line (`#!`) at the start, after a byte-order mark or white space, in
  UTF-8, UTF-16 or UTF-32; PHP (`<?php`) at the start;
- launchers: Windows shortcuts (`.lnk`), internet shortcuts (`[InternetShortcut]`) and desktop
  entries (`[Desktop Entry]`);
- zip-based programs, wherever the zip starts (a zip can be appended to an image): Java archives
  (jar, war, ear: `META-INF/MANIFEST.MF`), Android packages (`AndroidManifest.xml`,
  `classes.dex`) and Python zip applications (`__main__.py` at the top).

What is not refused: source code the agent only reads is refused by name alone (`.py`, `.js`, …),
so a script saved as `.txt` without an interpreter line passes — it cannot run by being opened.
Documents with macros (`.docm`, `.xlsm`) are not programs on their own and pass.
"""

from __future__ import annotations

import codecs
import re
import zipfile
from pathlib import Path

SNIFF_BYTES = 4096  # how much of the start of a file the content checks read

# Grouped by what runs them; every suffix of a name is checked against all of them.
EXECUTABLE_EXTENSIONS = frozenset(
    {
        # shells and shell-like scripts
        *(".sh", ".bash", ".zsh", ".csh", ".tcsh", ".ksh", ".fish", ".command", ".tool", ".run"),
        # interpreted languages
        *(".py", ".pyc", ".pyo", ".pyw", ".pyz", ".pyzw", ".pl", ".pm", ".rb", ".lua", ".tcl"),
        *(".php", ".phar", ".phtml", ".cgi", ".js", ".mjs", ".cjs", ".jse", ".vbs", ".vbe"),
        *(".ps1", ".psm1", ".psd1", ".ps1xml", ".wsf", ".wsh", ".ws", ".sct", ".hta"),
        *(".applescript", ".scpt"),
        # native programs and libraries
        *(".exe", ".com", ".bat", ".cmd", ".scr", ".pif", ".cpl", ".msc", ".dll", ".so", ".dylib"),
        *(".bin", ".elf", ".out", ".app", ".ko"),
        # packages and installers
        *(".msi", ".msp", ".mst", ".msix", ".msixbundle", ".appx", ".appxbundle", ".appimage"),
        *(".deb", ".rpm", ".dmg", ".pkg", ".snap", ".flatpak", ".apk", ".xapk", ".aab", ".ipa"),
        *(".jar", ".war", ".ear", ".class", ".dex", ".jnlp", ".application", ".gadget", ".inf"),
        # launchers and settings that run something
        *(".lnk", ".url", ".desktop", ".scf", ".reg"),
    }
)

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
)
_DESKTOP_ENTRY = re.compile(r"^\s*\[desktop entry\]\s*$", re.M)
_ZIP_PROGRAMS = (
    ("META-INF/MANIFEST.MF", "a Java archive"),
    ("AndroidManifest.xml", "an Android package"),
    ("classes.dex", "an Android package"),
    ("__main__.py", "a Python zip application"),
)


def extension_reason(name: str) -> str | None:
    for suffix in (s.lower() for s in Path(name).suffixes):
        if suffix in EXECUTABLE_EXTENSIONS:
            return f"files of type {suffix} are not accepted (executables and scripts are refused)"
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


def content_reason(head: bytes) -> str | None:
    """What the first `SNIFF_BYTES` of a file show it to be, if it is a program."""
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            return what
    text = _leading_text(head)
    for start, what in _TEXT_STARTS:
        if text.startswith(start):
            return what
    if _DESKTOP_ENTRY.search(text):
        return "a desktop entry (a launcher)"
    return None


def zip_reason(path: Path) -> str | None:
    """What a zip-based program `path` is, if it is one (the zip may start anywhere in the file).
    Only the zip's directory is read, never its contents."""
    try:
        if not zipfile.is_zipfile(path):
            return None
        with zipfile.ZipFile(path) as archive:
            names = {n.lower() for n in archive.namelist()}
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return None  # not a readable zip: nothing can run it as one either
    for member, what in _ZIP_PROGRAMS:
        if member.lower() in names:
            return what
    return None


def executable_reason(name: str, head: bytes) -> str | None:
    """Why `name` with content starting `head` is refused, or None."""
    if reason := extension_reason(name):
        return reason
    if what := content_reason(head):
        return f"{name} is {what}; executables and scripts are refused"
    return None
