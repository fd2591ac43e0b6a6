"""Extraction in a child process: the same result as in-process, progress streamed, errors carried
back with their codes, the wall-clock limit enforced by killing the child while the event loop
goes on serving, memory limited, a cancelled caller leaving no child behind, and a file over
max_bytes refused before any process starts."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

from navi.documents import isolate
from navi.documents.base import ExtractionError
from navi.documents.extract import Limits, extract
from tests.documents import makers

MB = 1024 * 1024


class Children(list[Any]):
    """The child processes extract_isolated starts; `spawned` is set at the first."""

    def __init__(self) -> None:
        super().__init__()
        self.spawned = asyncio.Event()


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> Children:
    started = Children()
    real = asyncio.create_subprocess_exec

    async def spawn(*args: Any, **kwargs: Any) -> Any:
        process = await real(*args, **kwargs)
        started.append(process)
        started.spawned.set()
        return process

    monkeypatch.setattr(isolate.asyncio, "create_subprocess_exec", spawn)
    return started


def big_csv(rows: int) -> bytes:
    return b"".join(b"row %d,%d,some words to read\n" % (n, n) for n in range(rows))


async def test_the_child_gives_what_extract_gives_with_progress(children: Children) -> None:
    data = makers.pdf({n: f"Page {n} says {n * 7}." for n in range(1, 31)}, count=30, sections={10: "Later"})
    seen: list[float] = []
    extracted = await isolate.extract_isolated(data, "pages.pdf", Limits(), on_progress=seen.append)
    assert extracted == extract(data, "pages.pdf")
    assert extracted.sections[20].place.page == 21
    assert extracted.sections[20].place.headings == ("Later",)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    assert children[0].returncode == 0


async def test_errors_come_back_with_their_code() -> None:
    data = makers.pdf({1: "Secret."}, count=1, password="hunter2")
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(data, "secret.pdf", Limits())
    assert caught.value.code == "encrypted"
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(makers.pdf({}, count=2), "scan.pdf", Limits())
    assert caught.value.code == "no_text"


async def test_a_slow_extraction_is_killed_while_the_loop_keeps_serving(children: Children) -> None:
    data = big_csv(1_000_000)  # 30 MB: several seconds of reading
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    beat = asyncio.create_task(ticker())
    started = time.monotonic()
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(data, "big.csv", Limits(seconds=1.0))
    elapsed = time.monotonic() - started
    beat.cancel()
    assert caught.value.code == "timeout"
    assert "1 s" in caught.value.reason
    assert 1.0 <= elapsed < 2.5
    assert children[0].returncode is not None and children[0].returncode < 0  # killed
    assert len(ticks) > 40  # ~100 expected; the loop never waited on the child
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(gaps) < 0.3


async def test_memory_is_limited_in_the_child() -> None:
    text = b"word " * (12 * MB)  # 60 MB of text: more than 150 MB once decoded and cleaned
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(text, "words.txt", Limits(memory_bytes=150 * MB))
    assert caught.value.code == "limit"
    assert "memory" in caught.value.reason


async def test_a_cancelled_caller_leaves_no_child(children: Children) -> None:
    task = asyncio.create_task(isolate.extract_isolated(big_csv(1_000_000), "big.csv", Limits()))
    await children.spawned.wait()
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert children[0].returncode is not None


async def test_too_large_is_refused_before_a_process_starts(children: Children) -> None:
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(bytes(200 * MB), "big.pdf", Limits())
    assert caught.value.code == "too_large"
    assert children == []
