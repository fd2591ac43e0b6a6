"""Reading a document's text: `extract(data, name, limits=…)` sniffs the kind (`sniff.py`) and hands
the bytes to that kind's reader, one small module each. Every reader gives `Section`s at their
`Place`, in reading order; what cannot be read is an `ExtractionError` with a code and a reason a
person understands. Readers are imported on first use: importing this package costs nothing.

This runs the parsers in the calling process; the server calls `isolate.extract_isolated`, which
runs it in a child process under memory, CPU and wall-clock limits.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable

from navi.documents.base import Extracted, ExtractionError
from navi.documents.extract.common import Budget, Limits, check_size
from navi.documents.extract.sniff import sniff

__all__ = ["Limits", "extract", "sniff"]

# kind → the module whose `read(data, name, budget)` reads it
READERS = {
    "pdf": "pdf",
    "docx": "word",
    "xlsx": "excel",
    "pptx": "powerpoint",
    "odt": "opendocument",
    "ods": "opendocument",
    "odp": "opendocument",
    "html": "web",
    "markdown": "plain",
    "text": "plain",
    "csv": "plain",
    "epub": "epub",
    "eml": "mail",
}


def extract(
    data: bytes,
    name: str,
    *,
    limits: Limits | None = None,
    on_progress: Callable[[float], None] | None = None,
) -> Extracted:
    """The text of the document `data` (named `name`, whose extension helps tell text kinds apart)."""
    limits = limits or Limits()
    check_size(len(data), limits)  # refused before anything reads it
    if not data or (len(data) < 65536 and not data.strip()):
        raise ExtractionError("no_text", "the file is empty")
    kind = sniff(data, name)
    budget = Budget(limits, on_progress)
    reader = importlib.import_module(f"navi.documents.extract.{READERS[kind]}")
    try:
        with warnings.catch_warnings():
            # Libraries warn about what they met in a file (openpyxl's styles, pypdfium2's
            # bookmarks); a warning is not a reason to refuse a document.
            warnings.simplefilter("ignore")
            extracted: Extracted = reader.read(data, name, budget, kind)
    except (ExtractionError, MemoryError, NameError):  # NameError: a bug of Navi's, not the file's
        raise
    except Exception as error:
        # What the libraries raise on files that break their assumptions (zipfile.BadZipFile,
        # lxml's XMLSyntaxError, KeyError for a missing part, openpyxl's InvalidFileException…).
        raise ExtractionError(
            "corrupt",
            f"the {kind.upper()} file is damaged or not what its name says ({type(error).__name__}: {error})",
        ) from error
    extracted.warnings.extend(budget.warnings())
    if not any(s.text.strip() for s in extracted.sections):
        raise ExtractionError("no_text", f"the {kind.upper()} file has no text")
    if budget.on_progress is not None:
        budget.on_progress(1.0)
    return extracted
