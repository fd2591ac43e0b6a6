"""File I/O on checked paths that a folder swapped after the check cannot redirect.

`PathPolicy.resolve` gives a real path — no symlink anywhere in it — and checks it against the
allowed roots and Navi's secrets. If the tools then opened that path by name, a folder on the way
replaced by a symlink between the check and the open (by a program the model started, or anything
else writing in the allowed folders) would send the open outside, to whatever the symlink names.

So nothing here opens a path by name. A folder is reached from `/` one component at a time, each
`os.open(name, O_NOFOLLOW, dir_fd=…)` relative to the descriptor of the folder before (openat), and
the final name is opened, created, renamed or removed relative to its folder's descriptor, again
without following a symlink. As the checked path held no symlink, finding one on the way means the
tree changed after the check: the call is refused with `PathChanged`. Folders are copied and
removed through descriptors too, and each file copied is checked against the secrets by inode.

On systems without `O_PATH` (macOS), the folders on the way are opened for reading, which needs
read permission on them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from navi.tools.paths import PathDenied

_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # a handle on a folder that needs no read permission
_STEP = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIST = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
COPY_CHUNK = 1 << 20


class PathChanged(PathDenied):
    """A folder or file of the checked path became a symlink after the check; nothing was done."""

    def __init__(self, real: Path) -> None:
        super().__init__(
            f"{real} changed while it was being opened (a folder or file on the way was replaced by "
            "a symlink); nothing was read or written — try again"
        )


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_at(dir_fd: int, name: str, flags: int, real: Path, mode: int = 0o666) -> int:
    """`os.open(name, flags | O_NOFOLLOW, dir_fd=dir_fd)`; a symlink there is `PathChanged`."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and _is_link(dir_fd, name):
            raise PathChanged(real) from None
        raise


def open_dir(real: Path, *, create: bool = False, listable: bool = False) -> int:
    """A descriptor of the folder `real`, reached from `/` without following any symlink.

    `create` makes missing folders on the way (as `mkdir -p`); `listable` opens the last one for
    reading its entries (the others are `O_PATH` handles, which need no read permission).
    """
    names = [p for p in real.parts[1:] if p]
    fd = os.open("/", _LIST if listable and not names else _STEP)
    try:
        for i, name in enumerate(names):
            flags = _LIST if listable and i == len(names) - 1 else _STEP
            try:
                step = _open_at(fd, name, flags, real)
            except FileNotFoundError:
                if not create:
                    raise
                with _suppress_exists():
                    os.mkdir(name, dir_fd=fd)
                step = _open_at(fd, name, flags, real)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def _suppress_exists() -> Iterator[None]:
    try:
        yield
    except FileExistsError:  # made meanwhile: the open that follows checks what it is
        pass


@contextmanager
def folder(real: Path, *, create: bool = False, listable: bool = False) -> Iterator[int]:
    """`open_dir` as a context: the descriptor is closed on the way out."""
    fd = open_dir(real, create=create, listable=listable)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def parent(real: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """The folder holding `real` (a descriptor) and `real`'s name in it."""
    if not real.name:
        raise PathDenied(f"{real} has no parent folder")
    with folder(real.parent, create=create) as fd:
        yield fd, real.name


Check = Callable[[os.stat_result], None]
_REOPEN = hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


def open_file(real: Path, flags: int, mode: int = 0o666, *, check: Check | None = None) -> int:
    """Open the file `real` (`os.open` flags; `O_CREAT` also makes the missing folders above it).

    `check(status)` raises to refuse the file (one of Navi's secrets). Where the system allows, it
    sees the file before any real descriptor of it exists: closing one of the database would drop
    the locks SQLite holds on it in this process, even if nothing was read.
    """
    with parent(real, create=bool(flags & os.O_CREAT)) as (fd, name):
        if check is None or not _REOPEN:
            return _open_at(fd, name, flags, real, mode)
        return _open_checked(fd, name, flags, real, mode, check)


def _open_checked(dir_fd: int, name: str, flags: int, real: Path, mode: int, check: Check) -> int:
    """`name` opened only after `check` passed on an `O_PATH` handle of it (which reads nothing
    and, closed, drops no lock), then reopened through that handle (`/proc/self/fd`): the very file
    checked, whatever replaced its name meanwhile. A file that did not exist is made with `O_EXCL`:
    a new file is no secret."""
    while True:
        try:
            handle = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
            with _suppress_exists():
                return _open_at(dir_fd, name, flags | os.O_EXCL, real, mode)
            continue  # made meanwhile: check that one
        try:
            st = os.fstat(handle)
            if stat.S_ISLNK(st.st_mode):  # the checked path held no symlink
                raise PathChanged(real)
            check(st)
            return os.open(f"/proc/self/fd/{handle}", flags & ~(os.O_CREAT | os.O_EXCL) | os.O_CLOEXEC)
        finally:
            os.close(handle)


@contextmanager
def opened(real: Path, flags: int, mode: int = 0o666, *, check: Check | None = None) -> Iterator[int]:
    """`open_file` as a context: the descriptor is closed on the way out."""
    fd = open_file(real, flags, mode, check=check)
    try:
        yield fd
    finally:
        os.close(fd)


def lstat(real: Path) -> os.stat_result:
    """`real`'s own status (a symlink is not followed), found through its folder's descriptor."""
    with parent(real) as (fd, name):
        return os.stat(name, dir_fd=fd, follow_symlinks=False)


def stat_of(real: Path) -> os.stat_result:
    """The status of what `real` is, refusing a symlink found in its place (`PathChanged`)."""
    if not real.name:
        return os.stat("/")
    with parent(real) as (fd, name):
        handle = _open_at(fd, name, _O_PATH | os.O_NONBLOCK, real)
        try:
            st = os.fstat(handle)
        finally:
            os.close(handle)
    if stat.S_ISLNK(st.st_mode):
        raise PathChanged(real)
    return st


def replace_file(real: Path, data: bytes) -> None:
    """Write `data` to `real` whole: a temporary file in the same folder, renamed over it.

    A new file gets mode 0600; a replaced one keeps its mode.
    """
    with parent(real, create=True) as (fd, name):
        try:
            old = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(real))
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        out = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd
        )
        try:
            with open(out, "wb") as fh:
                fh.write(data)
                if old is not None and stat.S_ISREG(old.st_mode):
                    os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
            os.replace(
                tmp, name, src_dir_fd=fd, dst_dir_fd=fd
            )  # a symlink put there is replaced, not followed
        except BaseException:
            with _suppress_missing():
                os.unlink(tmp, dir_fd=fd)
            raise


@contextmanager
def _suppress_missing() -> Iterator[None]:
    try:
        yield
    except FileNotFoundError:
        pass


def remove(real: Path, *, recursive: bool, whole: Callable[[], None] = lambda: None) -> bool:
    """Delete `real` (a symlink itself, never what it points to). A folder goes only when empty or
    `recursive`; returns False for a folder that is not empty and not `recursive`. `whole()` is
    called (and may raise) when what is there now is a folder, before it is removed."""
    with parent(real) as (fd, name):
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=fd)
            return True
        whole()
        if recursive:
            shutil.rmtree(name, dir_fd=fd)  # descriptor-based: a folder swapped inside is not followed
            return True
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise
        return True


def rename(source: Path, target: Path, *, whole: Callable[[], None] = lambda: None) -> None:
    """Move `source` (a symlink itself) to `target`; both folders are reached without following a
    symlink. `whole()` is called (and may raise) when `source` is a folder. Raises
    `OSError(EXDEV)` across file systems."""
    with parent(source) as (src_fd, src_name), parent(target, create=True) as (dst_fd, dst_name):
        if stat.S_ISDIR(os.stat(src_name, dir_fd=src_fd, follow_symlinks=False).st_mode):
            whole()
        os.rename(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)


def copy(
    source: Path, target: Path, *, refuse: Callable[[os.stat_result], bool], link_ok: bool = False
) -> None:
    """Copy the file or folder `source` (symlinks inside copied as symlinks) to `target`.

    A file is copied with its mode and times (over an existing file); a folder only to a new
    name. `refuse(stat)` says a file must not be read or overwritten (one of Navi's secrets, by
    inode): the copy stops with `PathDenied`. `source` itself may be a symlink only with
    `link_ok` (a moved link); otherwise it changed after the check.
    """
    with parent(source) as (src_fd, src_name), parent(target, create=True) as (dst_fd, dst_name):
        _copy_entry(src_fd, src_name, dst_fd, dst_name, refuse, source, top=not link_ok)


def _copy_entry(
    src_dir: int,
    name: str,
    dst_dir: int,
    new_name: str,
    refuse: Callable[[os.stat_result], bool],
    real: Path,
    *,
    top: bool = False,
) -> None:
    st = os.stat(name, dir_fd=src_dir, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        if top:  # a checked source is never a symlink itself
            raise PathChanged(real)
        os.symlink(os.readlink(name, dir_fd=src_dir), new_name, dir_fd=dst_dir)
    elif stat.S_ISDIR(st.st_mode):
        os.mkdir(new_name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=dst_dir)
        src = _open_at(src_dir, name, _LIST, real)
        try:
            dst = _open_at(dst_dir, new_name, _STEP, real)
            try:
                for entry in sorted(os.listdir(src)):
                    _copy_entry(src, entry, dst, entry, refuse, real / entry)
                os.chmod(new_name, stat.S_IMODE(st.st_mode), dir_fd=dst_dir)
            finally:
                os.close(dst)
        finally:
            os.close(src)
    elif stat.S_ISREG(st.st_mode):
        if refuse(st):  # by its status, before any descriptor of it exists (see _copy_file)
            raise PathDenied(f"{real} is one of Navi's own secret files; it cannot be copied")
        _copy_file(src_dir, name, dst_dir, new_name, refuse, real)
    # Devices, FIFOs and sockets are left out, as a copy of their contents makes no sense.


def _copy_file(
    src_dir: int, name: str, dst_dir: int, new_name: str, refuse: Callable[[os.stat_result], bool], real: Path
) -> None:
    """Copy one file. A secret is refused by `stat` before it is opened, and by `fstat` again after
    (it may have been swapped in between): the database among them must never be opened here at
    all if that can be helped, since closing any descriptor of it drops the locks SQLite holds on
    it in this process."""
    with contextlib.suppress(FileNotFoundError):
        if refuse(os.stat(new_name, dir_fd=dst_dir, follow_symlinks=False)):
            raise PathDenied(f"the copy of {real} would overwrite one of Navi's own secret files")
    src = _open_at(src_dir, name, os.O_RDONLY | os.O_NONBLOCK, real)
    with open(src, "rb") as reader:
        st = os.fstat(reader.fileno())
        if refuse(st):
            raise PathDenied(f"{real} is one of Navi's own secret files; it cannot be copied")
        if not stat.S_ISREG(st.st_mode):
            raise PathChanged(real)
        dst = _open_at(dst_dir, new_name, os.O_WRONLY | os.O_CREAT, real, 0o600)
        with open(dst, "wb") as writer:
            if refuse(os.fstat(writer.fileno())):  # checked before anything is cut or written
                raise PathDenied(f"the copy of {real} would overwrite one of Navi's own secret files")
            writer.truncate(0)
            shutil.copyfileobj(reader, writer, COPY_CHUNK)
            os.fchmod(writer.fileno(), stat.S_IMODE(st.st_mode))
            os.utime(writer.fileno(), ns=(st.st_atime_ns, st.st_mtime_ns))
