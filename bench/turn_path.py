"""How far a turn travels: the calls from the run's task to the model backend, and the async
generators each token passes back through.

A scripted model (no server) answers one message sent through `RunManager.start`, as the
WebSocket's `send` does. When the backend yields its first token, the frames on the stack are
read: every Navi function between the run's task and the backend (the hops), the modules they are
in, and how many of them are async generators (the token goes back up through each). The edge
before the task (the socket's frame → `Queueing.send` → `RunManager.start`) is the same three calls in
every version and is not counted.

    .venv/bin/python bench/turn_path.py            # this checkout
    PYTHONPATH=/path/to/old/checkout .venv/bin/python bench/turn_path.py   # another version

Prints one JSON line: hops, modules, async generator depth, and the chain itself.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from navi.compose import build_runtime
from navi.config import load_settings
from navi.llm.base import CallOptions, Chunk
from navi.llm.messages import Message, ToolSpec
from navi.llm.registry import BackendRegistry
from navi.runs import RunManager
from navi.testing.scripted import ScriptedBackend

NAVI = str(Path(sys.modules["navi"].__file__ or "").parent)


class Probe(ScriptedBackend):
    """Reads the stack when the model's first token goes out."""

    chain: list[dict[str, Any]] | None = None

    async def _stream(
        self, messages: Sequence[Message], options: CallOptions, tools: Sequence[ToolSpec] | None = None
    ) -> AsyncIterator[Chunk]:
        async for chunk in super()._stream(messages, options, tools):
            if Probe.chain is None and getattr(chunk, "type", "") == "text":
                Probe.chain = _navi_frames(inspect.currentframe())
            yield chunk


def _navi_frames(frame: Any) -> list[dict[str, Any]]:
    out = []
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(NAVI) and "/testing/" not in path:
            out.append(
                {
                    "module": path[len(NAVI) - 4 :].removesuffix(".py").replace("/", "."),
                    "function": frame.f_code.co_qualname,
                    "async_generator": bool(frame.f_code.co_flags & inspect.CO_ASYNC_GENERATOR),
                }
            )
        frame = frame.f_back
    return list(reversed(out))  # from the run's task down to the backend


async def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as work:
        backend = Probe(["Hello there, this is the answer."])
        registry = BackendRegistry()
        registry.register_instance("ollama", backend, default_model="bench-model")
        settings = load_settings(
            db_path=str(Path(work) / "navi.db"),
            tools_dir=str(Path(work) / "tools"),
            session_files_dir=str(Path(work) / "files"),
            planning_enabled=False,
            navi_approval_mode="auto",
            log_level="WARNING",
        )
        runtime = await build_runtime(settings, backends=registry)
        try:
            session = await runtime.sessions.create(runtime.profiles.default_id)
            runs = RunManager(runtime.agent)
            run = await runs.start(session.id, "Say hello.")
            await run.finished.wait()
        finally:
            await runtime.aclose()
    chain = Probe.chain or []
    return {
        "hops": len(chain),
        "modules": len({f["module"] for f in chain}),
        "async_generator_depth": sum(f["async_generator"] for f in chain),
        "chain": [f"{f['module']}:{f['function']}{' (gen)' if f['async_generator'] else ''}" for f in chain],
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), indent=1))
