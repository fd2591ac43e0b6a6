"""The bubblewrap command line for one confined child.

Every child gets new PID, IPC and UTS namespaces (and a new network namespace when the network is
off), no capabilities (bwrap started by root would otherwise leave the child all of root's: it
could unmount what covers a secret, mount the disk, load kernel modules), its own session (so it
cannot push keystrokes into a terminal with TIOCSTI), a fresh /proc (the server's
/proc/<pid>/environ is out of sight), a minimal /dev, and only the environment it is given. bwrap
kills the child when its own parent dies, and the child dies with bwrap.

The file system is laid out in layers, later ones on top of earlier ones:

1. the base: the whole file system read-write (FS_ALLOWED_PATHS=*), or only the system's programs,
   libraries and /etc read-only, an empty /tmp and the Python installation read-only (restricted);
2. what the child may write: the allowed folders (restricted only), its scratch folder, extras;
3. what it may only read: Navi's code and Python installation (never writable), extras, and the
   skills folders wherever a layer above shows them (never shown by themselves);
4. a fresh /dev and /proc, whatever was bound above, with /proc/sys read-only (and /sys
   read-only when the whole file system is shown);
5. the uploads: SESSION_FILES_DIR covered by an empty folder wherever a layer above shows it, so
   no session's uploads (another user's among them) can be seen — not even ones made after the
   child started; then the current session's own folder alone, read-only, and whatever Navi
   itself needs that lies inside SESSION_FILES_DIR (the layers above, bound again);
6. Navi's secrets, each covered by an empty file (or an empty folder).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from navi.sandbox.policy import SandboxPolicy

SYSTEM_DIRS = ("/usr", "/etc")
# Usually symlinks into /usr today; plain folders on older systems.
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _real(paths: Iterable[str]) -> list[str]:
    """Existing paths, resolved, without repeats, parents before children."""
    found = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    return sorted(found, key=lambda p: (p.count("/"), p))


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(Path(path).is_relative_to(root) for root in roots)


def _system_base() -> tuple[list[str], list[str]]:
    """Arguments for the read-only system part of a restricted sandbox, and the roots it shows."""
    args: list[str] = []
    visible: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.isdir(d):
            args += ["--ro-bind", d, d]
            visible.append(d)
    for d in SYSTEM_LINKS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            visible.append(d)
    # /etc/resolv.conf is often a link into /run (systemd-resolved): name lookups need its target.
    resolv = os.path.realpath("/etc/resolv.conf")
    if os.path.exists(resolv) and not _under(resolv, visible):
        args += ["--ro-bind", resolv, resolv]
        visible.append(resolv)
    return args, visible


@dataclass(frozen=True, kw_only=True)
class Child:
    """One confined child: what it runs and what this call adds to the policy.

    `workdir` (the child's HOME and TMPDIR) and `writable` are read-write, `readable` read-only,
    `uploads` (the current session's upload folder, None for none) the only part of
    `policy.session_files_dir` shown, read-only; `cwd` must be one of the visible folders; `env`
    is the whole environment the child gets. `info_fd`: a descriptor the child inherits, where
    bwrap writes the host pid of the sandbox's first process (`{"child-pid": …}`) once it exists.
    """

    command: Sequence[str]
    workdir: str
    cwd: str
    env: Mapping[str, str]
    writable: Sequence[str] = ()
    readable: Sequence[str] = ()
    uploads: str | None = None
    info_fd: int | None = None


def bwrap_argv(bwrap: str, policy: SandboxPolicy, child: Child) -> list[str]:
    """`child.command` wrapped in bwrap under `policy` (see `Child` for what each of its folders is)."""
    workdir, writable, uploads = child.workdir, child.writable, child.uploads
    args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if child.info_fd is not None:
        args += ["--info-fd", str(child.info_fd)]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not policy.network:
        args.append("--unshare-net")

    rw = _real([*policy.allowed_paths, workdir, *writable])
    ro = _real([*policy.protected_paths, *child.readable])
    if policy.unrestricted:
        # /sys read-only: as root, writing files such as /sys/kernel/uevent_helper needs no capability.
        args += ["--bind", "/", "/", *(["--ro-bind", "/sys", "/sys"] if os.path.isdir("/sys") else [])]
        visible = ["/"]
    else:
        base, visible = _system_base()
        args += [*base, "--tmpfs", "/tmp"]
        runtime = _real(policy.runtime_paths)
        for path in runtime:
            args += ["--ro-bind", path, path]
        visible += [*runtime, *rw, *ro]
    for path in rw:
        args += ["--bind", path, path]
    for path in ro:
        args += ["--ro-bind", path, path]
    for path in _real(policy.read_only_paths):
        if _under(path, visible) and path not in ro:
            args += ["--ro-bind", path, path]
    # After every bind, so that no folder bound above (even "/") brings back the server's /proc.
    # Sysctls and the SysRq trigger read-only: as root they need no capability to change the
    # machine (kernel.core_pattern runs a program as root; sysrq-trigger reboots).
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += ["--ro-bind-try", "/proc/sys", "/proc/sys"]
    args += ["--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    args += _uploads_layer(policy, visible, uploads, rw=[workdir, *writable], ro=ro)
    for secret in _real(policy.hidden_paths):
        if _under(secret, visible):
            args += ["--tmpfs", secret] if os.path.isdir(secret) else ["--ro-bind", "/dev/null", secret]

    args += ["--chdir", child.cwd, "--clearenv"]
    for name, value in child.env.items():
        args += ["--setenv", name, value]
    return [*args, "--", *child.command]


def _uploads_layer(
    policy: SandboxPolicy, visible: list[str], uploads: str | None, *, rw: Sequence[str], ro: Sequence[str]
) -> list[str]:
    """Arguments that hide every session's uploads but `uploads` (see layer 5 above)."""
    args: list[str] = []
    root = os.path.realpath(policy.session_files_dir) if policy.session_files_dir else ""
    if root and os.path.isdir(root) and _under(root, visible):
        args += ["--tmpfs", root]
        # Navi's own folders that happen to lie inside it (never an allowed folder: FS_ALLOWED_PATHS
        # inside SESSION_FILES_DIR would be some session's uploads).
        inside = [p for p in [*_real(rw), *_real(ro), *_real(policy.runtime_paths)] if _under(p, [root])]
        for path in _real(inside):
            mode = "--bind" if path in _real(rw) else "--ro-bind"
            args += [mode, path, path]
    if uploads:
        args += ["--ro-bind", uploads, uploads]
    return args
