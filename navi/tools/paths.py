"""Which filesystem paths tools may touch (`FS_ALLOWED_PATHS`, minus Navi's own secrets).

A path is allowed when its fully resolved real path — every symlink followed, every `..` applied —
lies inside the resolved real path of an allowed root, compared with `Path.is_relative_to` (so
`/srv/data-evil` is not inside `/srv/data`). Callers must use the returned resolved path for the
actual I/O, never the text they were given.

Navi's own secrets (the database and its journals, the token file, `.env`, the SSH hosts file with
its passwords: `denied`) are refused whatever the roots say, even with `*`: by their path, by any
path that resolves to them (symlinks, `..`), by a hard link to the same file, and anything under
them. `covers_secret` tells the tools when a folder holds one, so copying, moving or deleting the
folder whole can be refused too.

Uploads (`uploads`, SESSION_FILES_DIR) belong to one session each: only the current run's session
folder (`uploads/<session id>`, the session a subagent works for) may be touched. Every other path
inside `uploads` — another session's folder, so another user's files, or anything at its top — is
refused like a secret, after symlinks are resolved; a run without a session gets none of them.
`is_other_upload` also tells listings what to leave out, `covers_uploads` that a folder holds them.

The check is made on names, so the tools never open the resolved path by name afterwards: they go
through `navi.tools.safe_io`, which refuses to follow a symlink put in its way after the check.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from navi import runctx


class PathDenied(PermissionError):
    """The path is outside the allowed roots, or a secret; the message says which and why."""


def run_session() -> str | None:
    """The session whose uploads the current run may use (a subagent's: the one it works for)."""
    ctx = runctx.current()
    return ctx.root_session if ctx is not None else None


def upload_folder_name(session_id: str | None) -> str | None:
    """`session_id` as a folder name in SESSION_FILES_DIR, or None when it cannot be one (empty,
    `.`/`..`, a separator or NUL in it): such a run has no upload folder."""
    if not session_id or session_id in (".", "..") or "/" in session_id or "\x00" in session_id:
        return None
    return session_id


class PathPolicy:
    def __init__(
        self,
        allowed: list[str],
        *,
        base: Path | None = None,
        denied: list[str] | None = None,
        uploads: str | None = None,
        session: Callable[[], str | None] = run_session,
    ) -> None:
        self.unrestricted = not allowed or "*" in allowed
        self.base = base or Path.cwd()
        self.roots = (
            [] if self.unrestricted else [Path(os.path.realpath(Path(a).expanduser())) for a in allowed]
        )
        self.denied = [self._absolute(d) for d in denied or []]
        self.uploads = self._absolute(uploads) if uploads else None
        self.session = session
        # Called with each path that passed the checks, just before `resolve` returns it: a seam for
        # tests that must change the tree exactly between the check and the open. None in use.
        self.after_check: Callable[[Path], None] | None = None

    def describe(self) -> str:
        return "anywhere" if self.unrestricted else ", ".join(str(r) for r in self.roots)

    def resolve(self, raw: str, *, follow_last: bool = True) -> Path:
        """The real path `raw` refers to, checked against the roots and the secrets; raises `PathDenied`.

        `follow_last=False` resolves everything but the final component, for acting on a symlink
        itself (deleting or moving the link, not what it points to).
        """
        if not raw or "\x00" in raw:
            raise PathDenied("a path must be non-empty text without NUL characters")
        path = self._absolute(raw)
        if follow_last or path.name in ("", ".", ".."):
            real = Path(os.path.realpath(path))
        else:
            real = Path(os.path.realpath(path.parent)) / path.name
        if not self.unrestricted and not any(real.is_relative_to(root) for root in self.roots):
            raise PathDenied(f"{raw} is outside the allowed paths ({self.describe()})")
        if self.is_secret(real, follow=follow_last):
            raise self.secret_denied(raw)
        if self.is_other_upload(real):
            raise self.upload_denied(raw)
        if self.after_check is not None:
            self.after_check(real)
        return real

    @staticmethod
    def secret_denied(raw: str) -> PathDenied:
        return PathDenied(
            f"{raw} is one of Navi's own secret files (its database, access token, .env or SSH "
            "hosts file); no tool may read, change or move it"
        )

    @staticmethod
    def upload_denied(raw: str) -> PathDenied:
        return PathDenied(
            f"{raw} is in the uploads of another session (another conversation, maybe another "
            "user's); no tool may read, change or move it — only this session's own uploads"
        )

    # --- uploads ---------------------------------------------------------------------------------
    def _upload_roots(self) -> tuple[Path, Path | None] | None:
        """SESSION_FILES_DIR's real path now, and the current session's folder in it (None: no
        session, so no folder); None when there is no SESSION_FILES_DIR."""
        if self.uploads is None:
            return None
        root = Path(os.path.realpath(self.uploads))
        name = upload_folder_name(self.session())
        return root, (root / name if name else None)

    def is_other_upload(self, real: Path) -> bool:
        """Whether the resolved path `real` lies inside SESSION_FILES_DIR but outside the current
        session's own folder (the folder itself, if a symlink, does not count as its own)."""
        roots = self._upload_roots()
        if roots is None:
            return False
        root, own = roots
        if real == root or not real.is_relative_to(root):
            return False
        return own is None or not real.is_relative_to(own)

    def covers_uploads(self, real: Path) -> bool:
        """Whether the folder `real` holds SESSION_FILES_DIR (and so other sessions' uploads)."""
        roots = self._upload_roots()
        return roots is not None and roots[0].is_relative_to(real)

    def allows(self, raw: str) -> bool:
        try:
            self.resolve(raw)
        except PathDenied:
            return False
        return True

    def is_secret(self, real: Path, *, follow: bool = True) -> bool:
        """Whether the resolved path `real` is a secret, lies under one, or is a hard link to one."""
        if any(real.is_relative_to(secret) for secret in self._secret_paths()):
            return True
        try:
            st = real.stat() if follow else real.lstat()
        except OSError:
            return False
        return self.is_secret_file(st)

    def is_secret_file(self, st: os.stat_result) -> bool:
        """Whether the file with status `st` (of an open descriptor, say) is one of the secrets."""
        return any(st.st_ino == s.st_ino and st.st_dev == s.st_dev for s in self._secret_stats())

    def covers_secret(self, real: Path) -> bool:
        """Whether the folder `real` holds a secret somewhere below it (a recursive action would reach it)."""
        return any(secret.is_relative_to(real) for secret in self._secret_paths())

    def _absolute(self, raw: str) -> Path:
        path = Path(raw).expanduser()
        return path if path.is_absolute() else self.base / path

    def _secret_paths(self) -> list[Path]:
        """Each secret as written and as its real path now (a folder on the way may be a symlink)."""
        return [p for d in self.denied for p in (d, Path(os.path.realpath(d)))]

    def _secret_stats(self) -> list[os.stat_result]:
        stats = []
        for secret in self.denied:
            try:
                stats.append(secret.stat())
            except OSError:
                continue
        return stats
