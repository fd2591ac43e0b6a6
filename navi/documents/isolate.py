"""Extraction in a child process, so a hostile or huge document costs a process, not the server.

`extract_isolated` hands the document to a reader process (`python -m
navi.documents.extract_worker`, started on the first document of each event loop, in a session of
its own), which has imported every reader and forks a child per document: the child sets its own
address-space and CPU limits (`resource.setrlimit`) before it reads anything, and its answer comes
back as JSON lines, progress first. One document at a time per reader (the indexer reads one at
a time anyway). When `limits.seconds` of wall clock have passed, or the caller is cancelled, the
reader's whole process group is killed — the child with it — and the next document starts a new
reader. All waiting is asyncio: the event loop serves everyone else meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import weakref
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from navi.documents.base import Extracted, ExtractionError, Place, Section
from navi.documents.extract.common import Limits, check_size
from navi.logging import get_logger

log = get_logger(__name__)

WORKER = "navi.documents.extract_worker"
LINE_LIMIT = 512 * 1024 * 1024  # one answer is one JSON line (Limits.max_chars keeps it below)


class _Reader:
    """One reader process and the lock that gives it one document at a time."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()

    async def started(self) -> asyncio.subprocess.Process:
        if self.process is None or self.process.returncode is not None:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                WORKER,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
                start_new_session=True,  # no terminal signals; killed as one group, children too
            )
        return self.process

    async def kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()


_readers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Reader] = weakref.WeakKeyDictionary()


async def close_reader() -> None:
    """End this event loop's reader, if one runs (the indexer's loop ends): it exits when its
    stdin closes; killed if it has not within a second."""
    reader = _readers.pop(asyncio.get_running_loop(), None)
    if reader is None or reader.process is None:
        return
    process = reader.process
    if process.stdin is not None:
        process.stdin.close()
    try:
        async with asyncio.timeout(1.0):
            await process.wait()
    except TimeoutError:
        await reader.kill()


def reader_pid() -> int | None:
    """The process id of this event loop's reader, if one runs (for measuring its CPU)."""
    reader = _readers.get(asyncio.get_running_loop())
    return reader.process.pid if reader and reader.process and reader.process.returncode is None else None


async def extract_isolated(
    data: bytes,
    name: str,
    limits: Limits | None = None,
    on_progress: Callable[[float], None] | None = None,
) -> Extracted:
    """`extract.extract(data, name, limits=limits)`, run in a child process under the limits."""
    limits = limits or Limits()
    check_size(len(data), limits)  # refused before anything reads it
    reader = _readers.setdefault(asyncio.get_running_loop(), _Reader())
    async with reader.lock:
        done = False
        try:
            async with asyncio.timeout(limits.seconds):
                answer, code = await _exchange(await reader.started(), data, name, limits, on_progress)
            done = True
        except TimeoutError:
            raise ExtractionError(
                "timeout", f"reading the document took longer than {limits.seconds:g} s and was stopped"
            ) from None
        except (OSError, ValueError) as error:  # the reader died, or an answer past LINE_LIMIT
            log.warning("documents.reader_failed", error=f"{type(error).__name__}: {error}")
            raise ExtractionError(
                "corrupt", "the document's reader stopped unexpectedly; the file may be damaged"
            ) from None
        finally:
            if not done:  # timed out, cancelled, or the reader broke: it and its child go
                await asyncio.shield(reader.kill())
    return _result(answer, code)


async def _exchange(
    process: asyncio.subprocess.Process,
    data: bytes,
    name: str,
    limits: Limits,
    on_progress: Callable[[float], None] | None,
) -> tuple[dict[str, Any] | None, int | None]:
    """Send one document; relay progress; the child's answer (None: it gave none) and exit code."""
    assert process.stdin is not None and process.stdout is not None
    header = {"name": name, "limits": asdict(limits), "size": len(data)}
    process.stdin.write(json.dumps(header).encode() + b"\n")
    process.stdin.write(data)
    await process.stdin.drain()
    answer: dict[str, Any] | None = None
    while True:
        line = await process.stdout.readline()
        if not line:
            raise ConnectionError("the document reader ended")
        try:
            message = json.loads(line)
        except ValueError:
            continue  # not a line of the protocol: the exit line decides
        if not isinstance(message, dict):
            continue
        if "exit" in message:
            code = message["exit"]
            return answer, code if isinstance(code, int) else None
        if "progress" in message:
            if on_progress is not None:
                with contextlib.suppress(TypeError, ValueError):
                    on_progress(float(message["progress"]))
            continue
        answer = message


def _result(message: dict[str, Any] | None, code: int | None) -> Extracted:
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        raise ExtractionError(str(message["error"].get("code")), str(message["error"].get("reason")))
    if code == 0 and isinstance(message, dict) and isinstance(message.get("result"), dict):
        return decode(message["result"])
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ExtractionError("limit", "reading the document used more CPU or memory than Navi allows")
    detail = f" (signal {-code})" if code is not None and code < 0 else ""
    log.warning("documents.extract_crashed", returncode=code)
    raise ExtractionError(
        "corrupt", f"the document's reader stopped unexpectedly{detail}; the file may be damaged"
    )


def encode(extracted: Extracted) -> dict[str, Any]:
    """An Extracted as JSON-able data (the worker's answer)."""
    return {
        "kind": extracted.kind,
        "pages": extracted.pages,
        "title": extracted.title,
        "warnings": extracted.warnings,
        "sections": [
            [s.text, {k: v for k, v in asdict(s.place).items() if v not in (None, ())}]
            for s in extracted.sections
        ],
    }


def decode(data: dict[str, Any]) -> Extracted:
    sections = []
    for text, place in data["sections"]:
        if "headings" in place:
            place["headings"] = tuple(place["headings"])
        sections.append(Section(text, Place(**place)))
    return Extracted(
        data["kind"], sections, pages=int(data["pages"]), title=data["title"], warnings=list(data["warnings"])
    )
