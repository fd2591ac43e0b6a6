"""The child process of `isolate.extract_isolated`: limits itself, reads one document from stdin,
writes its extraction (or the error) as JSON on stdout, and progress lines on stderr.

    stdin:  {"name": …, "limits": {…}}\\n<the document's bytes>
    stdout: {"result": {…}} or {"error": {"code": …, "reason": …}}
    stderr: "progress 0.25" lines (and a traceback if something unforeseen happens)
"""

from __future__ import annotations

import json
import math
import os
import sys
import time


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


def main() -> int:
    header = json.loads(sys.stdin.buffer.readline())
    from navi.documents.base import ExtractionError
    from navi.documents.extract import extract
    from navi.documents.extract.common import Limits
    from navi.documents.isolate import encode

    limits = Limits(**header["limits"])
    _limit(limits.memory_bytes, limits.seconds)
    data = sys.stdin.buffer.read(limits.max_bytes + 1)
    last = 0.0

    def progress(fraction: float) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= 0.1 or fraction >= 1.0:
            last = now
            sys.stderr.write(f"progress {fraction:.4f}\n")
            sys.stderr.flush()

    try:
        extracted = extract(data, header["name"], limits=limits, on_progress=progress)
        answer: dict[str, object] = {"result": encode(extracted)}
    except ExtractionError as error:
        answer = {"error": {"code": error.code, "reason": error.reason}}
    except MemoryError:
        answer = {
            "error": {"code": "limit", "reason": "reading the document needed more memory than Navi allows"}
        }
    del data
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
