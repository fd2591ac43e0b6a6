"""Navi's access token: the one you set, or one Navi makes for itself and keeps in a 0600 file.

The rule is Jupyter's: without `NAVI_API_TOKEN`, the first start creates a random token in
`NAVI_TOKEN_FILE` (beside the database by default), readable only by the user running Navi; later
starts read it back. `navi serve` prints a sign-in link holding it — the only place it is ever
printed — and clients of the same user read the file. Other local accounts, and anything that can
reach the port but not the file (a web page, a model fetching 127.0.0.1), get 401.

Serving with no token at all takes `NAVI_AUTH_DISABLED=true`, and only on loopback. Listening
beyond loopback needs a token you set yourself (`navi serve` refuses otherwise).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from navi.compose.problems import SetupError, which_of
from navi.config import Settings
from navi.logging import get_logger

log = get_logger(__name__)

TOKEN_FIX = "set NAVI_TOKEN_FILE to a file Navi can write, or set NAVI_API_TOKEN"
Source = Literal["setting", "file", "disabled"]


@dataclass(frozen=True)
class AccessToken:
    value: str  # empty only when auth is disabled
    source: Source
    path: Path | None = None  # the file, when Navi keeps its own token


def access_token(settings: Settings, *, create: bool = True) -> AccessToken:
    """The token requests must carry; made and stored on first use when none is set.

    `create=False` (read-only callers such as `navi doctor`) reads an existing file but never
    writes one; without a file the token is empty and `source` is "file".
    """
    if settings.navi_api_token:
        return AccessToken(settings.navi_api_token, "setting")
    if settings.navi_auth_disabled:
        if not settings.listens_on_loopback():
            raise SetupError(
                "NAVI_AUTH_DISABLED only works on loopback, and Navi is set to listen on "
                f"{settings.navi_host}",
                "set NAVI_API_TOKEN, or NAVI_HOST=127.0.0.1",
            )
        return AccessToken("", "disabled")
    path = Path(settings.token_file).expanduser().absolute()
    database = [settings.db_path + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    if not settings.uses_postgres and which_of(path, database):
        # Reading it would open the live database outside SQLite (dropping SQLite's locks on it).
        raise SetupError(f"the token file {path} is the database (DB_PATH) or one of its journals", TOKEN_FIX)
    token = read_token_file(path)
    if token is None and create:
        token = _create(path)
    return AccessToken(token or "", "file", path)


def read_token_file(path: Path) -> str | None:
    """The token kept in `path`, or None when there is no such file (or it is empty).

    A file others can read is no secret any more: its mode is put back to 0600 and a warning
    logged (the warning names the file, never the token).
    """
    try:
        info = path.stat()
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SetupError(f"cannot read the token file {path}: {_reason(exc)}", TOKEN_FIX) from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        with contextlib.suppress(OSError):
            path.chmod(0o600)
        log.warning("token_file.mode_fixed", path=str(path), was=oct(stat.S_IMODE(info.st_mode)))
    return token or None


def _create(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # O_EXCL: two starts at once cannot both write; the loser reads the winner's token.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token_file(path) or token
    except OSError as exc:
        raise SetupError(f"cannot create the token file {path}: {_reason(exc)}", TOKEN_FIX) from exc
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    log.info("token_file.created", path=str(path))
    return token


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()
