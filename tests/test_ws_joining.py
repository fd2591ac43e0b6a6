"""A socket that falls behind gets the deltas waiting for it joined into one frame; one that keeps
up gets a frame per delta. The text, the order and the resume point (`seq`) are the same."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from navi.api.websocket import JOIN_BACKLOG, _sender
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import frames_until, live_navi, use_script


class Recorder:
    """Stands in for the socket: records what is sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.wrote = asyncio.Event()

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.wrote.set()


def delta(seq: int, text: str, run: str = "r1", kind: str = "stream_delta") -> dict[str, Any]:
    return {"type": kind, "delta": text, "run_id": run, "seq": seq}


async def drained(outbox: asyncio.Queue[Any], socket: Recorder) -> None:
    sender = asyncio.create_task(_sender(socket, outbox, {}))  # type: ignore[arg-type]
    for _ in range(10_000):  # the sender runs between these steps; never blocks on a full socket
        if outbox.empty():
            break
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    sender.cancel()


async def test_waiting_deltas_of_one_run_are_joined_with_the_last_seq() -> None:
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    shared = delta(3, "c")
    behind = [delta(seq, "z") for seq in range(10, 10 + JOIN_BACKLOG)]
    frames = [
        {"type": "stream_start", "run_id": "r1", "seq": 1},
        delta(2, "a"),
        shared,
        delta(4, "d"),
        {"type": "tool_call", "run_id": "r1", "seq": 5},
        delta(6, "e"),
        delta(7, "f", kind="thinking_delta"),
        delta(8, "g", kind="thinking_delta"),
        delta(2, "other run", run="r2"),
        delta(9, "h"),
        *behind,
    ]
    for frame in frames:
        outbox.put_nowait(frame)
    socket = Recorder()
    await drained(outbox, socket)
    assert socket.sent == [
        {"type": "stream_start", "run_id": "r1", "seq": 1},
        delta(4, "acd"),
        {"type": "tool_call", "run_id": "r1", "seq": 5},
        delta(6, "e"),
        delta(8, "fg", kind="thinking_delta"),
        delta(2, "other run", run="r2"),
        delta(9 + JOIN_BACKLOG, "h" + "z" * JOIN_BACKLOG),
    ]
    assert shared == delta(3, "c")  # frames are shared by every socket: never changed in place


async def test_a_short_burst_is_not_joined() -> None:
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    burst = [delta(seq, str(seq)) for seq in range(2, 2 + JOIN_BACKLOG - 1)]
    for frame in burst:
        outbox.put_nowait(frame)
    socket = Recorder()
    await drained(outbox, socket)
    assert socket.sent == burst


async def test_a_socket_that_keeps_up_gets_a_frame_per_delta() -> None:
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    socket = Recorder()
    sender = asyncio.create_task(_sender(socket, outbox, {}))  # type: ignore[arg-type]
    for seq, text in enumerate("abcd", start=2):
        socket.wrote.clear()
        outbox.put_nowait(delta(seq, text))
        await asyncio.wait_for(socket.wrote.wait(), 5)
    sender.cancel()
    assert socket.sent == [delta(2, "a"), delta(3, "b"), delta(4, "c"), delta(5, "d")]


async def test_a_joined_frame_stops_growing_at_the_limit() -> None:
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    for seq in range(2, 2 + 100):
        outbox.put_nowait(delta(seq, "x" * 1000))
    socket = Recorder()
    await drained(outbox, socket)
    assert "".join(f["delta"] for f in socket.sent) == "x" * 100_000
    assert len(socket.sent) > 1 and all(len(f["delta"]) <= 33_000 for f in socket.sent)
    assert [f["seq"] for f in socket.sent] == sorted(f["seq"] for f in socket.sent)
    assert socket.sent[-1]["seq"] == 101


async def test_a_fast_stream_arrives_whole_and_in_order(tmp_path: Path, fake_server: FakeModelServer) -> None:
    answer = "".join(f"w{i} " for i in range(400))
    use_script(fake_server).turn(Reply(text=answer, chunk_chars=3))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "go"}))
            frames = await frames_until(ws, "stream_end")
    deltas = [f for f in frames if f["type"] == "stream_delta"]
    assert "".join(f["delta"] for f in deltas) == answer == frames[-1]["content"]
    seqs = [f["seq"] for f in frames if "seq" in f]
    assert seqs == sorted(set(seqs))  # increasing; numbers of joined deltas are skipped
