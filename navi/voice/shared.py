"""Loaded speech models, one per process for the same files and options.

A loaded model is read-only weights and an inference session that may be called from several
threads (CTranslate2 and onnxruntime both allow it), so two runtimes in one process share it
instead of each reading and preparing the same files again: about 1.2 CPU-s for Whisper base and
0.9 for a Piper voice. A server builds one runtime; the test suite builds many in each process.
The key names the files by path, size and modification time, so a model replaced on disk is
loaded again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_LOADED: dict[tuple[Hashable, ...], Any] = {}
_LOCK = threading.Lock()


def identity(path: Path) -> tuple[str, int, int]:
    """`path` as a key: where it really is, its size and when it last changed."""
    found = os.stat(path)
    return os.path.realpath(path), found.st_size, found.st_mtime_ns


def shared(key: tuple[Hashable, ...], load: Callable[[], T]) -> T:
    """The model loaded for `key`, loading it with `load` the first time (one load at a time)."""
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = load()
        return _LOADED[key]
