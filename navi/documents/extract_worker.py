"""The reader process of `isolate.py`: started once, it imports every reader, then forks a child
for each document, so a document costs a fork (milliseconds) rather than a new interpreter and its
imports (about half a second of CPU). The child limits itself before it looks at the document.

    python -m navi.documents.extract_worker

One document at a time on stdin: a JSON line `{"name": …, "limits": {…}, "size": N}`, then N bytes.
On stdout, one JSON object per line: `{"progress": 0.25}` lines while the child reads, then its
answer, `{"result": {…}}` or `{"error": {"code": …, "reason": …}}`, then `{"exit": CODE}` (the
child's wait status as `Popen.returncode` gives it: negative for a signal). Only JSON crosses,
never pickles: a document that took over its reader can lie about its text, and nothing more.
The reader ends when stdin closes; its caller kills its process group to stop a child at once.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import IO, Any

READERS = ("pdf", "word", "excel", "powerpoint", "opendocument", "web", "plain", "epub", "mail")


def _limit(memory_bytes: int, seconds: float) -> None:
    """Address space and CPU time for this process (past the CPU soft limit comes SIGXCPU, a
    second later SIGKILL); no core dumps; a lower priority than the server's."""
    import resource

    cpu = math.ceil(seconds) + 1
    for kind, soft, hard in (
        (resource.RLIMIT_AS, memory_bytes, memory_bytes),
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))
    os.nice(5)


def _preload() -> None:
    import importlib

    importlib.import_module("navi.documents.isolate")  # its `encode`, and what it imports
    for reader in READERS:
        try:
            importlib.import_module(f"navi.documents.extract.{reader}")
        except ImportError:  # a reader whose library is missing fails when a document needs it
            pass


def read(out: IO[str], data: bytes, name: str, limits: dict[str, Any]) -> None:
    """The child's work: limit itself, extract, answer on `out`."""
    from navi.documents.base import ExtractionError
    from navi.documents.extract import extract
    from navi.documents.extract.common import Limits
    from navi.documents.isolate import encode

    bounds = Limits(**limits)
    _limit(bounds.memory_bytes, bounds.seconds)  # a fork's CPU count starts at zero
    last = 0.0

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message, ensure_ascii=False) + "\n")
        out.flush()

    def progress(fraction: float) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= 0.1 or fraction >= 1.0:
            last = now
            send({"progress": round(fraction, 4)})

    try:
        answer: dict[str, Any] = {"result": encode(extract(data, name, limits=bounds, on_progress=progress))}
    except ExtractionError as error:
        answer = {"error": {"code": error.code, "reason": error.reason}}
    except MemoryError:
        reason = "reading the document needed more memory than Navi allows"
        answer = {"error": {"code": "limit", "reason": reason}}
    send(answer)


def _one(stdin: IO[bytes], stdout: IO[str]) -> bool:
    """Serve one document; False at the end of stdin."""
    header = stdin.readline()
    if not header:
        return False
    request = json.loads(header)
    data = stdin.read(int(request["size"]))
    answers, child_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only its pipe to write to
        os.close(answers)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        code = 0
        try:
            with os.fdopen(child_end, "w", encoding="utf-8") as out:
                read(out, data, str(request["name"]), dict(request["limits"]))
        except BaseException:  # whatever happens, the child ends here and never returns
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    os.close(child_end)
    del data
    with os.fdopen(answers, encoding="utf-8") as lines:
        for line in lines:
            stdout.write(line)
            stdout.flush()
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    stdout.write(json.dumps({"exit": code}) + "\n")
    stdout.flush()
    return True


def main() -> int:
    import gc

    _preload()
    # What the reader imported stays out of the collector's sight: a child's collection would
    # otherwise walk (and so copy, page by page) every object it shares with the reader.
    gc.freeze()
    stdin, stdout = sys.stdin.buffer, sys.stdout
    while _one(stdin, stdout):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
