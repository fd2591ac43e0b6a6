"""What every reader shares: the limits, the budget a reading spends, the zip checks, text clean-up
and the two ways a document's text becomes `Section`s (under headings, or as a sheet's rows).

Readers are small functions `read(data, name, budget) -> Extracted`; they raise `ExtractionError`
with a code (`base.ExtractionError`) for what a person should be told, and let anything else fall
through to `extract()`, which calls it "corrupt".
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from navi.documents.base import ExtractionError, Place, Section

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How much one document may cost. The defaults are generous for real documents and refuse
    what only an attack or an accident produces."""

    max_bytes: int = 100 * MB  # the file itself, checked before anything is parsed
    max_pages: int = 5000  # pages, slides, sheets or chapters
    max_unpacked_bytes: int = 500 * MB  # a zip-based format's members, summed from its directory
    max_chars: int = 20_000_000  # extracted text kept; the rest is cut, with a warning
    seconds: float = 120.0  # wall clock for one extraction
    # Added to the model in base.py's spirit (not named by the brief): the isolated process's
    # address space, and the compression ratio past which a big zip is taken for a bomb.
    memory_bytes: int = 2048 * MB
    max_zip_ratio: int = 200


def check_size(size: int, limits: Limits) -> None:
    """Refuse a file over `max_bytes`, before anything reads it."""
    if size > limits.max_bytes:
        raise ExtractionError(
            "too_large",
            f"the file is {size / MB:,.0f} MB; Navi reads files of at most {limits.max_bytes / MB:,.0f} MB",
        )


@dataclass
class Budget:
    """One extraction's spending: text kept so far against `max_chars`, the deadline (checked
    between pages, so an in-process extraction stops too), progress for whoever watches."""

    limits: Limits
    on_progress: Callable[[float], None] | None = None
    chars: int = 0
    truncated: bool = False
    deadline: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.limits.seconds

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ExtractionError(
                "timeout", f"reading the document took longer than {self.limits.seconds:g} s and was stopped"
            )

    def check_pages(self, pages: int, unit: str = "pages") -> None:
        if pages > self.limits.max_pages:
            raise ExtractionError(
                "too_many_pages",
                f"the document has {pages:,} {unit}; Navi reads at most {self.limits.max_pages:,}",
            )

    def progress(self, done: int, total: int) -> None:
        self.check_time()
        if self.on_progress is not None and total > 0:
            self.on_progress(min(1.0, done / total))

    def take(self, text: str) -> str:
        """`text` as far as `max_chars` still allows (all of it, usually)."""
        room = self.limits.max_chars - self.chars
        if len(text) > room:
            self.truncated = True
            text = text[: max(room, 0)]
        self.chars += len(text)
        return text

    @property
    def full(self) -> bool:
        return self.chars >= self.limits.max_chars

    def warnings(self) -> list[str]:
        if not self.truncated:
            return []
        return [f"only the first {self.limits.max_chars:,} characters of the text were kept"]


# Text clean-up: control characters out, runs of spaces collapsed, line ends unified, lines kept.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufeff\ufffe\uffff]")
_SPACES = re.compile(r"[ \t\f\v\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_BLANKS = re.compile(r"\n{3,}")


def clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x0c", "\n\n")
    text = _SPACES.sub(" ", _CONTROL.sub("", text))
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANKS.sub("\n\n", text).strip()


def decode_text(data: bytes) -> str:
    """Bytes of a text file as text: a BOM says the encoding, else UTF-8, else Windows-1252 (which
    every byte string decodes in, near enough — Latin-1 for the five bytes it leaves undefined)."""
    for bom, encoding in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def open_zip(data: bytes, limits: Limits, what: str) -> zipfile.ZipFile:
    """The archive of a zip-based format, after its directory is checked against the limits: the
    members' uncompressed sizes summed, and the ratio to the compressed ones. Python's zipfile
    never inflates a member past the size the directory states (it fails the CRC instead), so the
    check holds for whatever reads the archive afterwards."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise ExtractionError("corrupt", f"the {what} file is damaged or cut short ({error})") from None
    infos = archive.infolist()
    if len(infos) > 100_000:
        raise ExtractionError(
            "too_large", f"the {what} file holds {len(infos):,} parts; that is not a document"
        )
    unpacked = sum(info.file_size for info in infos)
    packed = sum(info.compress_size for info in infos) or 1
    if unpacked > limits.max_unpacked_bytes:
        raise ExtractionError(
            "too_large",
            f"the {what} file unpacks to {unpacked / MB:,.0f} MB; Navi reads at most "
            f"{limits.max_unpacked_bytes / MB:,.0f} MB",
        )
    if unpacked > 10 * MB and unpacked / packed > limits.max_zip_ratio:
        raise ExtractionError(
            "too_large",
            f"the {what} file unpacks {unpacked / packed:,.0f} times larger than it is "
            f"({unpacked / MB:,.0f} MB): it looks like a zip bomb",
        )
    return archive


def read_member(archive: zipfile.ZipFile, member: str, what: str) -> bytes:
    try:
        return archive.read(member)
    except KeyError:
        raise ExtractionError("corrupt", f"the {what} file has no {member}") from None
    except (zipfile.BadZipFile, EOFError, OSError) as error:
        raise ExtractionError("corrupt", f"the {what} file is damaged ({error})") from None


class HeadingSections:
    """Text under headings, as Sections: `heading(level, text)` opens a new one whose place has the
    heading path (outermost first), `paragraph(text)` adds to the open one. The heading's own text
    starts its section, so a search for it finds the passage below."""

    def __init__(self, budget: Budget, base: Place | None = None) -> None:
        self.budget = budget
        self.base = base or Place()
        self.path: list[tuple[int, str]] = []
        self.parts: list[str] = []
        self.sections: list[Section] = []

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        self.flush()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, text))
        self.parts.append(text)

    def paragraph(self, text: str) -> None:
        text = clean(text)
        if text:
            self.parts.append(text)

    def flush(self) -> None:
        text = self.budget.take("\n\n".join(self.parts))
        self.parts = []
        if text:
            headings = tuple(h for _, h in self.path)
            place = Place(
                page=self.base.page,
                slide=self.base.slide,
                sheet=self.base.sheet,
                cells=self.base.cells,
                headings=headings,
            )
            self.sections.append(Section(text, place))

    def done(self) -> list[Section]:
        self.flush()
        return self.sections


def column_letter(index: int) -> str:
    """1 → "A", 27 → "AA"."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


Row = tuple[int, list[tuple[int, str]]]  # a row's 1-based number, its non-empty (column, text) cells


def row_sections(
    rows: Iterable[Row],
    budget: Budget,
    sheet: str | None,
    *,
    max_chars: int = 1200,
    max_rows: int = 50,
    max_gap: int = 10,
) -> Iterator[Section]:
    """A sheet's rows as Sections of a few rows each, each at its cell range ("A1:F40"), sized so
    one fits a chunk: a cited range then points at the rows that say it; more than `max_gap`
    empty rows start a new one (a second table further down). A row is its cells' texts joined
    by " | "."""
    lines: list[str] = []
    first = last = 0
    low, high = 10**9, 0
    size = 0

    def section() -> Section:
        text = budget.take("\n".join(lines))
        cells = f"{column_letter(low)}{first}:{column_letter(high)}{last}"
        return Section(text, Place(sheet=sheet, cells=cells))

    for count, (number, cells) in enumerate(rows):
        if count % 2000 == 1999:
            budget.check_time()
        if budget.full:
            break
        if not cells:
            continue
        line = " | ".join(" ".join(text.split()) for _, text in cells)
        if lines and (size + len(line) > max_chars or len(lines) >= max_rows or number - last > max_gap):
            yield section()
            lines, size, low, high = [], 0, 10**9, 0
        if not lines:
            first = number
        lines.append(line)
        size += len(line) + 1
        last = number
        low = min(low, cells[0][0])
        high = max(high, cells[-1][0])
    if lines:
        yield section()
