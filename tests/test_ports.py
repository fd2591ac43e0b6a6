"""navi/testing/ports.py: each test process takes ports from a block of its own, below the kernel's."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from navi.testing import ports


def _ephemeral_floor() -> int:
    return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])


@pytest.mark.parametrize("worker", ["gw0", "gw1", "gw7"])
def test_a_workers_ports_are_its_own_and_below_the_kernels_range(
    worker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    index = int(worker[2:])
    given = [ports.free_port() for _ in range(50)]
    low = ports.BASE + index * ports.BLOCK
    assert all(low <= port < low + ports.BLOCK for port in given)
    assert max(given) < _ephemeral_floor()
    assert len(set(given)) == 50  # one after the other, never the same port twice in a row


def test_a_port_in_use_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    first = ports.free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", first))
        taken.listen()
        # Go round the whole block: the port that is listening is never handed out.
        assert first not in {ports.free_port() for _ in range(ports.BLOCK)}


def test_outside_a_test_run_the_kernel_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_VERSION", raising=False)
    assert ports.free_port() >= _ephemeral_floor()
