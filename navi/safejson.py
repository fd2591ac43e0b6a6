"""JSON from strangers: parsed with a nesting limit, its text made storable.

`json.loads` accepts things the rest of Navi cannot use: nesting deep enough to exhaust the
interpreter's recursion limit (a `RecursionError` deep inside whatever walks the value next), lone
UTF-16 surrogates (`"\\ud800"` decodes to a `str` that UTF-8, SQLite and PostgreSQL all refuse to
encode) and NUL characters (PostgreSQL text cannot hold them). `loads` refuses the first with
`UnsafeJSON` and replaces the other two with U+FFFD, so what it returns can be stored, logged and
sent back over a WebSocket. Text that is not JSON at all raises what `json.loads` raises (a
`ValueError`), so callers keep their own wording for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # far beyond any frame, body or archive Navi writes (archives nest about 8 deep)
REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # after json.loads every surrogate is a lone one


class UnsafeJSON(ValueError):
    """Valid JSON that Navi will not take: nested deeper than the limit."""


def clean_text(text: str) -> str:
    """`text` with lone surrogates and NUL characters replaced by U+FFFD."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse `data`, refuse nesting deeper than `max_depth`, clean every string (keys too).

    Raises `UnsafeJSON` for nesting, `ValueError` (`json.JSONDecodeError`, `UnicodeDecodeError`)
    for text that is not JSON."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise UnsafeJSON(_too_deep(max_depth)) from None
    return clean(value, max_depth=max_depth)


def _too_deep(limit: int) -> str:
    return f"the JSON is nested too deeply (at most {limit} levels)"


def clean(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """Walk a parsed value without recursion: check its depth and clean its strings in place."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, dict | list):
        return value
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise UnsafeJSON(_too_deep(max_depth))
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    if _UNSTORABLE.search(item):
                        node[i] = clean_text(item)
                elif isinstance(item, dict | list):
                    stack.append((item, depth + 1))
            continue
        for key in [k for k in node if _UNSTORABLE.search(k)]:
            node[clean_text(key)] = node.pop(key)
        for key, item in node.items():
            if isinstance(item, str):
                if _UNSTORABLE.search(item):
                    node[key] = clean_text(item)
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return value
