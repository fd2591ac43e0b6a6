"""XLSX, through openpyxl in read-only mode (rows streamed, cached formula values): each sheet's
rows as a few Sections, each at its sheet and cell range ("Budget", "A1:F40")."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from navi.documents.base import Extracted, Section
from navi.documents.extract.common import Budget, Row, open_zip, row_sections


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import io

    import openpyxl

    open_zip(data, budget.limits, "XLSX").close()
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        names = workbook.sheetnames
        budget.check_pages(len(names), "sheets")
        sections: list[Section] = []
        for index, sheet_name in enumerate(names):
            sheet = workbook[sheet_name]
            if hasattr(sheet, "iter_rows"):  # chartsheets have no cells
                sections.extend(row_sections(_rows(sheet), budget, sheet_name))
            budget.progress(index + 1, len(names))
        title = (workbook.properties.title or "").strip() or None
    finally:
        workbook.close()
    return Extracted("xlsx", sections, pages=len(names), title=title)


def _rows(sheet: Any) -> Iterator[Row]:
    for row in sheet.iter_rows():
        cells: list[tuple[int, str]] = []
        number = 0
        for cell in row:
            value = getattr(cell, "value", None)
            if value is None:
                continue
            number = cell.row
            text = format_value(value)
            if text:
                cells.append((cell.column, text))
        if cells:
            yield number, cells


def format_value(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime.datetime):
        return (
            value.isoformat(sep=" ", timespec="minutes")
            if value.time() != datetime.time()
            else value.date().isoformat()
        )
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return str(value).strip()
