"""The sandbox the tools use: a policy plus what the probe found, turned into command lines.

Tools never decide whether to confine: they ask `Sandbox.command()` for the argv to run and get
either the bwrap-wrapped command, the command as it is (SANDBOX_MODE=off, or `auto` without a
working bubblewrap — the runtime has said so at start), or `SandboxRefused` (`required`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence

from navi.sandbox.bwrap import Child, bwrap_argv
from navi.sandbox.policy import SandboxPolicy
from navi.sandbox.probe import INSTALL_FIX, Availability, probe


class SandboxRefused(RuntimeError):
    """The policy requires a sandbox and none can be made: the child is not started."""


class Sandbox:
    def __init__(self, policy: SandboxPolicy, availability: Availability | None = None) -> None:
        self.policy = policy
        if availability is None:
            availability = Availability(None, "the sandbox is off") if policy.mode == "off" else probe()
        self.availability = availability

    @property
    def active(self) -> bool:
        """True when children really run inside bubblewrap."""
        return self.policy.mode != "off" and self.availability.ok

    def describe(self) -> str:
        """One line for logs and `navi doctor`: what confines children, or why nothing does."""
        if self.active:
            files = (
                "the whole file system except Navi's secrets"
                if self.policy.unrestricted
                else f"only {', '.join(self.policy.allowed_paths)} (and the system read-only)"
            )
            network = "on" if self.policy.network else "off"
            version = self.availability.version or "bubblewrap"
            return f"{version} confines code_exec, terminal and user tools: network {network}, files: {files}"
        if self.policy.mode == "off":
            return "off: code_exec, terminal and user tools run unconfined, as the user running Navi"
        return f"not available ({self.availability.problem})"

    def refusal(self) -> str:
        return (
            f"the sandbox is required but not available ({self.availability.problem}); nothing was run. "
            f"Fix: {INSTALL_FIX}"
        )

    def command(
        self,
        argv: Sequence[str],
        *,
        workdir: str,
        cwd: str,
        env: Mapping[str, str],
        session_id: str | None = None,
        writable: Sequence[str] = (),
        readable: Sequence[str] = (),
        info_fd: int | None = None,
    ) -> list[str]:
        """The argv that runs `argv` under this sandbox (`argv` itself when not confining).

        `workdir` is the child's own scratch folder; `session_id` shows that session's upload
        folder, read-only, and no other session's (without one, none at all); `info_fd`, a
        descriptor the child inherits, gets the host pid of the sandbox's first process (nothing
        when not confining). Raises `SandboxRefused` when confinement is required but unavailable.
        """
        if not self.active:
            if self.policy.mode == "required":
                raise SandboxRefused(self.refusal())
            return list(argv)
        assert self.availability.bwrap is not None
        self._make_uploads_root()
        child = Child(
            command=argv,
            workdir=workdir,
            cwd=cwd,
            env=env,
            writable=writable,
            readable=readable,
            uploads=self.policy.session_folder(session_id),
            info_fd=info_fd,
        )
        return bwrap_argv(self.availability.bwrap, self.policy, child)

    def _make_uploads_root(self) -> None:
        """SESSION_FILES_DIR exists before a child starts (0700, as the uploads make it), so it is
        covered: uploads made while the child runs land in a folder it cannot see."""
        if self.policy.session_files_dir:
            with contextlib.suppress(OSError):  # a folder that cannot be made holds no uploads either
                os.makedirs(self.policy.session_files_dir, mode=0o700, exist_ok=True)
