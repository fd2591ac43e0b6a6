"""What `navi serve` prints as a person starts it: the sign-in link is the last thing of its start
(after uvicorn's and Navi's start-up lines), and requests do not bury it under access-log lines at
the default level. `navi token` prints the link again; the sign-in page says where the token is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.security.served import served_navi


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_sign_in_link_is_the_last_thing_printed_and_requests_are_not_logged(tmp_path: Path) -> None:
    with served_navi(tmp_path, LOG_LEVEL="INFO") as navi:
        token = (tmp_path / "navi_token").read_text().strip()
        link = f"{navi.url}/login?token={token}"
        deadline = time.monotonic() + 10
        while link not in navi.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        with httpx.Client(base_url=navi.url, headers={"Authorization": f"Bearer {token}"}) as http:
            for _ in range(25):  # what a page's polls look like
                assert http.get("/sessions").status_code == 200
                assert http.get("/schedules").status_code == 200
                assert http.get("/nothing-here").status_code == 404
        time.sleep(0.5)
        shown = lines(navi.output())
    assert any("Application startup complete" in line for line in shown), shown  # INFO lines do show
    assert shown[-3:] == [
        f"Navi is ready: {navi.url}/",
        f"  sign in: {link}",
        f"  (the token is kept in {tmp_path / 'navi_token'}, readable only by you; "
        "`navi token` prints this link again)",
    ], shown[-8:]
    assert not any("http.request" in line for line in shown)


def test_navi_token_prints_the_link_and_the_sign_in_page_says_where_it_is(tmp_path: Path) -> None:
    env = {**os.environ, "DB_PATH": str(tmp_path / "navi.db"), "NAVI_PORT": "8765"}
    done = subprocess.run(
        [sys.executable, "-m", "navi", "token"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"navi: no token yet: `navi serve` makes one in {tmp_path / 'navi_token'} on its first start\n"
    )

    with served_navi(tmp_path) as navi:
        token = (tmp_path / "navi_token").read_text().strip()
        page = httpx.get(f"{navi.url}/login")
        assert page.status_code == 200
        assert "<code>navi token</code> prints that link again" in page.text
        assert "<code>navi_token</code> beside Navi's database" in page.text
        assert token not in page.text and str(tmp_path) not in page.text  # where, never what
        port = navi.url.rsplit(":", 1)[1]
        done = subprocess.run(
            [sys.executable, "-m", "navi", "token"],
            env={**env, "NAVI_PORT": port},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[:2] == [f"Navi: {navi.url}/", f"  sign in: {navi.url}/login?token={token}"]
