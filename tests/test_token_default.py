"""A token by default: Navi makes one on first start, keeps it in a 0600 file, and asks every request
for it — so other local accounts and anything that can reach the port but not the file are kept out."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register
from navi.cli.main import app as cli
from navi.cli.serve import sign_in_text
from navi.compose import SetupError
from navi.compose.token import access_token
from navi.config import load_settings
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import live_navi

_register()  # the commands, as `navi` registers them (this module may run on its own)

NOBODY = 65534


def test_first_start_makes_a_token_in_a_0600_file_and_later_starts_reuse_it(tmp_path: Path) -> None:
    settings = load_settings(db_path=str(tmp_path / "data" / "navi.db"))
    first = access_token(settings)
    path = tmp_path / "data" / "navi_token"
    assert first.source == "file" and first.path == path and len(first.value) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == first.value
    assert access_token(settings).value == first.value  # the next start reads it back
    path.chmod(0o644)  # someone loosened it: it is tightened again, the token kept
    assert access_token(settings).value == first.value
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_set_token_wins_and_read_only_callers_create_nothing(tmp_path: Path) -> None:
    settings = load_settings(db_path=str(tmp_path / "navi.db"), navi_api_token="mine-and-long-enough")
    assert access_token(settings).value == "mine-and-long-enough"
    bare = load_settings(db_path=str(tmp_path / "navi.db"))
    assert access_token(bare, create=False).value == ""
    assert not (tmp_path / "navi_token").exists()


def test_auth_off_needs_its_setting_and_loopback(tmp_path: Path) -> None:
    off = load_settings(db_path=str(tmp_path / "navi.db"), navi_auth_disabled=True)
    assert access_token(off).value == "" and not (tmp_path / "navi_token").exists()
    wide = load_settings(db_path=str(tmp_path / "navi.db"), navi_auth_disabled=True, navi_host="0.0.0.0")
    with pytest.raises(SetupError, match="only works on loopback"):
        access_token(wide)


def test_an_unwritable_token_file_is_one_clear_error(tmp_path: Path) -> None:
    settings = load_settings(db_path=str(tmp_path / "navi.db"), navi_token_file="/proc/navi/token")
    with pytest.raises(SetupError) as error:
        access_token(settings)
    assert "cannot create the token file /proc/navi/token" in str(error.value)
    assert "NAVI_TOKEN_FILE" in str(error.value)


def test_a_token_file_that_is_the_database_is_one_clear_error(tmp_path: Path) -> None:
    """Navi never reads (so never opens) its live database as the token file; nothing is touched."""
    import sqlite3

    db = tmp_path / "navi.db"
    sqlite3.connect(db).close()
    os.link(db, tmp_path / "hard")
    os.symlink(db, tmp_path / "soft")
    before = db.read_bytes(), stat.S_IMODE(db.stat().st_mode)
    for name in ("navi.db", "navi.db-wal", "hard", "soft"):
        settings = load_settings(db_path=str(db), navi_token_file=str(tmp_path / name))
        with pytest.raises(SetupError) as error:
            access_token(settings)
        assert str(error.value).startswith(
            f"the token file {tmp_path / name} is the database (DB_PATH) or one of its journals — "
        ), name
        assert "NAVI_TOKEN_FILE" in str(error.value)
    assert (db.read_bytes(), stat.S_IMODE(db.stat().st_mode)) == before
    assert not (tmp_path / "navi.db-wal").exists()


def test_without_a_token_setting_requests_need_the_made_token(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        token = (tmp_path / "navi_token").read_text().strip()
        assert navi.token == token
        with navi.client(anonymous=True) as http:
            assert http.get("/health").status_code == 200
            assert http.get("/sessions").status_code == 401
            assert http.post("/sessions").status_code == 401
            assert http.get("/", follow_redirects=False).headers["location"] == "/login"
            # The sign-in link `navi serve` prints: the cookie, then the page without the token.
            link = http.get(f"/login?token={token}", follow_redirects=False)
            assert link.status_code == 303 and link.headers["location"] == "/"
            assert "HttpOnly" in link.headers["set-cookie"] and token not in link.headers["set-cookie"]
            assert http.get("/sessions").status_code == 200  # the cookie now
            wrong = http.get("/login?token=guess", follow_redirects=False)
            assert wrong.status_code == 401 and "not right" in wrong.text
        with navi.client() as http:
            assert http.get("/sessions").status_code == 200


def test_another_local_account_cannot_drive_navi(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """As another uid on the same machine: no token file to read, so every API call is refused."""
    tmp_path.chmod(0o755)  # the folder is open to others: only the file's own mode protects it
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        probe = f"""
import json, urllib.request, urllib.error
out = {{}}
try:
    open({str(tmp_path / "navi_token")!r}).read()
    out["token_read"] = True
except PermissionError:
    out["token_read"] = False
for method, path in (("GET", "/sessions"), ("GET", "/sessions/{sid}"), ("DELETE", "/sessions/{sid}"),
                     ("POST", "/sessions/{sid}/messages")):
    body = b"{{}}" if method == "POST" else None
    request = urllib.request.Request({navi.url!r} + path, method=method, data=body,
                                     headers={{"Content-Type": "application/json"}})
    try:
        out[method + " " + path] = urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as exc:
        out[method + " " + path] = exc.code
print(json.dumps(out))
"""
        done = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                sys.executable,
                "-c",
                probe,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": os.environ["PATH"]},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen.pop("token_read") is False
        assert set(seen.values()) == {401}, seen
        with navi.client() as http:
            assert http.get(f"/sessions/{sid}").status_code == 200  # nothing was deleted


def test_serve_prints_the_sign_in_link_and_no_log_line_holds_the_token(tmp_path: Path) -> None:
    settings = load_settings(db_path=str(tmp_path / "navi.db"))
    token = access_token(settings)
    text = sign_in_text("127.0.0.1", 8123, token)
    assert f"http://127.0.0.1:8123/login?token={token.value}" in text and str(token.path) in text
    assert token.value not in sign_in_text(
        "127.0.0.1", 8123, access_token(load_settings(navi_api_token="x" * 20))
    )
    # doctor says where the token is kept, never what it is
    result = CliRunner().invoke(
        cli, ["doctor"], env={"DB_PATH": str(tmp_path / "navi.db"), "OLLAMA_HOST": "http://127.0.0.1:9"}
    )
    assert str(token.path) in result.output and token.value not in result.output
