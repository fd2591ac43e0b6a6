"""A throwaway PostgreSQL cluster in a temporary directory, for tests and benchmarks.

`initdb` + `pg_ctl` on a free port, listening on 127.0.0.1 only, trust authentication. PostgreSQL
refuses to run as root, so under root the cluster runs as the `postgres` system user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from navi.testing.ports import free_port


def _find(binary: str) -> str:
    found = shutil.which(binary)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{binary}"), reverse=True):
        return str(candidate)
    raise FileNotFoundError(f"{binary} not found: install PostgreSQL (apt-get install postgresql)")


class PostgresCluster:
    def __init__(self, *, fsync: bool = False, user: str = "navi") -> None:
        self.fsync = fsync
        self.user = user
        self.port = 0
        self.base = Path(tempfile.mkdtemp(prefix="navi-pg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self._run_as: pwd.struct_passwd | None = pwd.getpwnam("postgres") if os.geteuid() == 0 else None

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, object] = {}
        if self._run_as is not None:
            uid, gid = self._run_as.pw_uid, self._run_as.pw_gid
            kwargs["user"], kwargs["group"], kwargs["extra_groups"] = uid, gid, []
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=self.base, **kwargs)  # type: ignore[call-overload]
        if proc.returncode != 0:
            raise RuntimeError(
                f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc

    def start(self) -> PostgresCluster:
        if self._run_as is not None:
            os.chown(self.base, self._run_as.pw_uid, self._run_as.pw_gid)
        self._run(
            _find("initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync"
        )
        self.port = free_port()
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.base} -c max_connections=200"
        if not self.fsync:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            _find("pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def stop(self) -> None:
        try:
            if self.data.exists():
                self._run(_find("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except RuntimeError:
            pass
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def _client(self, binary: str, *args: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = subprocess.run(
            [_find(binary), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, *args],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{binary} failed: {proc.stderr.strip()}")

    def create_database(self, name: str | None = None, *, template: str | None = None) -> str:
        """Create a fresh database (empty, or a copy of the database `template`) and return its URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        copy = ["--template", template, "--strategy", "file_copy"] if template else []
        self._client("createdb", *copy, name)
        return self.url(name)

    def drop_database(self, url: str) -> None:
        self._client("dropdb", "--force", "--if-exists", url.rsplit("/", 1)[1])

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
