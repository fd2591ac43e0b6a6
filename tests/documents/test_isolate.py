"""Extraction in a child process: the same result as in-process, progress streamed, errors carried
back with their codes, the wall-clock limit enforced by killing the child while the event loop
goes on serving, memory limited, a cancelled caller leaving no child behind, and a file over
max_bytes refused before any process starts."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import time
from pathlib import Path
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


def children_of(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


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
    # The next document is read by a fork of the same reader process, not a new interpreter.
    again = await isolate.extract_isolated(data, "pages.pdf", Limits())
    assert again == extracted
    assert len(children) == 1 and children[0].returncode is None
    assert isolate.reader_pid() == children[0].pid


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
    # The reader already runs (as after a server's first document): starting a process holds the
    # event loop until the child has exec'd, which a loaded machine can make a third of a second.
    await isolate.extract_isolated(big_csv(10), "small.csv", Limits())
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


async def test_after_a_killed_reader_the_next_document_gets_a_new_one(children: Children) -> None:
    with pytest.raises(ExtractionError):
        await isolate.extract_isolated(big_csv(1_000_000), "big.csv", Limits(seconds=0.5))
    data = makers.pdf({1: "Still readable."}, count=1)
    extracted = await isolate.extract_isolated(data, "one.pdf", Limits())
    assert "Still readable." in extracted.sections[0].text
    assert len(children) == 2 and children[0].returncode == -9 and children[1].returncode is None


async def test_a_child_that_dies_is_a_clear_error_and_the_reader_goes_on(children: Children) -> None:
    task = asyncio.create_task(isolate.extract_isolated(big_csv(1_000_000), "big.csv", Limits()))
    await children.spawned.wait()
    reader = children[0].pid
    forked: list[int] = []
    for _ in range(500):  # the reader's child, once it is forked
        forked = [int(p) for p in children_of(reader)]
        if forked:
            break
        await asyncio.sleep(0.01)
    assert forked, "the reader forked no child"
    os.kill(forked[0], signal.SIGKILL)  # as the kernel does to a process past its memory
    with pytest.raises(ExtractionError) as caught:
        await task
    assert caught.value.code == "limit" and "CPU or memory" in caught.value.reason
    ok = await isolate.extract_isolated(makers.pdf({1: "Fine."}, count=1), "fine.pdf", Limits())
    assert "Fine." in ok.sections[0].text
    assert len(children) == 1  # the same reader went on


async def test_too_large_is_refused_before_a_process_starts(children: Children) -> None:
    with pytest.raises(ExtractionError) as caught:
        await isolate.extract_isolated(bytes(200 * MB), "big.pdf", Limits())
    assert caught.value.code == "too_large"
    assert children == []
