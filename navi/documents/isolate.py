"""Extraction in a child process, so a hostile or huge document costs a process, not the server.

`extract_isolated` starts `python -m navi.documents.extract_worker`, writes it one JSON line (the
name and the limits) and then the document's bytes on stdin, and reads the result as one JSON
document on stdout; progress comes as "progress 0.42" lines on stderr while it works. The child
sets its own address-space and CPU limits (`resource.setrlimit`) before it reads anything;
the parent kills it when `limits.seconds` of wall clock have passed. All waiting is asyncio: the
event loop serves everyone else meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from navi.documents.base import Extracted, ExtractionError, Place, Section
from navi.documents.extract.common import Limits, check_size
from navi.logging import get_logger

log = get_logger(__name__)

WORKER = "navi.documents.extract_worker"


async def extract_isolated(
    data: bytes,
    name: str,
    limits: Limits | None = None,
    on_progress: Callable[[float], None] | None = None,
) -> Extracted:
    """`extract.extract(data, name, limits=limits)`, run in a child process under the limits."""
    limits = limits or Limits()
    check_size(len(data), limits)  # refused before anything reads it
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        WORKER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # no terminal signals; killed as one
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    diagnostics: list[str] = []

    async def feed() -> None:
        header = json.dumps({"name": name, "limits": asdict(limits)}).encode() + b"\n"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(header)
            stdin.write(data)
            await stdin.drain()
            stdin.close()

    async def watch() -> None:
        async for raw in stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line.startswith("progress "):
                if on_progress is not None:
                    with contextlib.suppress(ValueError):
                        on_progress(float(line.split()[1]))
            elif line:
                diagnostics.append(line)
                del diagnostics[:-20]

    try:
        async with asyncio.timeout(limits.seconds):
            _, output, _, code = await asyncio.gather(feed(), stdout.read(), watch(), process.wait())
    except TimeoutError:
        raise ExtractionError(
            "timeout", f"reading the document took longer than {limits.seconds:g} s and was stopped"
        ) from None
    finally:
        if process.returncode is None:  # timed out, or the caller was cancelled
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return _result(output, code, diagnostics, limits)


def _result(output: bytes, code: int, diagnostics: list[str], limits: Limits) -> Extracted:
    try:
        message = json.loads(output) if output else None
    except ValueError:
        message = None
    if isinstance(message, dict) and "error" in message:
        raise ExtractionError(str(message["error"]["code"]), str(message["error"]["reason"]))
    if code == 0 and isinstance(message, dict) and "result" in message:
        return decode(message["result"])
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ExtractionError("limit", "reading the document used more CPU or memory than Navi allows")
    detail = f" (signal {-code})" if code < 0 else ""
    log.warning("documents.extract_crashed", returncode=code, stderr="\n".join(diagnostics)[-2000:])
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
