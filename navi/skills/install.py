"""Installing skills from a folder, a zip file or a git repository.

Whatever the source, it becomes a folder on this machine first, then every skill in it (the folder
itself when it holds a SKILL.md, else each folder below it that does, at most `MAX_DEPTH` deep) goes
through `SkillLibrary.install_folder` — the same checks as loading. One bad skill in a collection is
reported and the others are installed.

- A **zip** is checked before anything is written: no absolute names, no `..`, no backslashes, no
  links or special files, at most `MAX_ZIP_MEMBERS` members and `MAX_ZIP_BYTES` unpacked (counted
  while unpacking too, so a member that lies about its size is caught).
- A **git URL** (https://, ssh://, git@…, file://, or a path ending in .git) is cloned with `git`
  into a temporary folder: `--depth 1`, no hooks, no submodules, links checked out as plain files
  (`core.symlinks=false`). A GitHub address of a folder
  (`https://github.com/OWNER/REPO/tree/REF/PATH`) clones REF and installs from PATH.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from navi.skills.format import (
    MAX_FILES,
    MAX_TOTAL_BYTES,
    Skill,
    SkillError,
    SkillProblem,
    check_size,
)
from navi.skills.library import MAX_DEPTH, SkillLibrary, find_skills

MAX_ZIP_MEMBERS = MAX_FILES * 4
MAX_ZIP_BYTES = MAX_TOTAL_BYTES * 2
GIT_TIMEOUT = 120
_GITHUB_TREE = re.compile(r"^(https://github\.com/[^/]+/[^/]+?)(?:\.git)?/tree/([^/]+)(?:/(.+?))?/?$")


class InstallError(ValueError):
    """The source cannot be read at all (nothing was installed)."""


@dataclass
class Installed:
    skills: list[Skill] = field(default_factory=list)
    problems: list[SkillProblem] = field(default_factory=list)


def is_git_url(source: str) -> bool:
    return bool(
        re.match(r"^(https?|ssh|git|file)://", source)
        or re.match(r"^[\w.-]+@[\w.-]+:", source)
        or (source.endswith(".git") and not Path(source).is_file())
    )


def install_tree(
    library: SkillLibrary, user: str, folder: Path, label: str, *, replace: bool = False
) -> Installed:
    out = Installed()
    candidates = find_skills(folder)
    if not candidates:
        raise InstallError(f"{label}: no SKILL.md found (looked {MAX_DEPTH} folders deep)")
    for candidate in candidates:
        rel = candidate.relative_to(folder).as_posix()
        where = label if rel == "." else f"{label}/{rel}"
        problems = check_size(candidate, where)
        if problems:
            out.problems.extend(problems)
            continue
        try:
            out.skills.append(library.install_folder(user, candidate, label=where, replace=replace))
        except SkillError as exc:
            out.problems.extend(exc.problems)
    return out


def check_zip(archive: zipfile.ZipFile, label: str) -> None:
    """Refuse a zip with unsafe names, links, too many members or too many bytes (`SkillError`)."""
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise SkillError(
            [SkillProblem(label, 0, f"the zip has {len(members)} members; at most {MAX_ZIP_MEMBERS}")]
        )
    total = 0
    for info in members:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if (
            name.startswith("/")
            or "\\" in name
            or ".." in parts
            or "\x00" in name
            or re.match(r"^[A-Za-z]:", name)
        ):
            raise SkillError(
                [
                    SkillProblem(
                        f"{label}:{name}",
                        0,
                        "unsafe name in the zip (absolute, '..' or '\\'); nothing was installed",
                    )
                ]
            )
        kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix type recorded (a plain member)
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise SkillError(
                [
                    SkillProblem(
                        f"{label}:{name}",
                        0,
                        "links and special files are not allowed in a skill zip; nothing was installed",
                    )
                ]
            )
        total += info.file_size
    if total > MAX_ZIP_BYTES:
        raise SkillError(
            [
                SkillProblem(
                    label, 0, f"the zip unpacks to {total:,} bytes; at most {MAX_ZIP_BYTES:,} (size limit)"
                )
            ]
        )


def unpack_zip(path: Path, into: Path, label: str) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InstallError(f"{label}: not a zip file ({exc})") from None
    with archive:
        check_zip(archive, label)
        written = 0
        for info in archive.infolist():
            target = into / info.filename
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as dst:
                while chunk := src.read(65536):
                    written += len(chunk)
                    if written > MAX_ZIP_BYTES:
                        raise SkillError(
                            [
                                SkillProblem(
                                    label,
                                    0,
                                    f"the zip unpacks to more than {MAX_ZIP_BYTES:,} bytes (size limit)",
                                )
                            ]
                        )
                    dst.write(chunk)


def clone(url: str, into: Path, ref: str | None = None) -> None:
    argv = [
        "git",
        "-c", "core.symlinks=false",
        "-c", "core.hooksPath=/dev/null",
        "-c", "protocol.ext.allow=never",
        "clone", "--quiet", "--depth", "1", "--no-recurse-submodules",
    ]  # fmt: skip
    if ref:
        argv += ["--branch", ref]
    argv += ["--", url, str(into)]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "GIT_TERMINAL_PROMPT": "0",
        "HOME": str(into.parent),
        "LANG": "C",
    }
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, check=False)
    except FileNotFoundError:
        raise InstallError(
            "git is not installed: install it (apt install git) to add skills from a repository"
        ) from None
    except subprocess.TimeoutExpired:
        raise InstallError(f"git clone of {url} took longer than {GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        raise InstallError(f"git clone of {url} failed: {done.stderr.strip()[-500:] or done.returncode}")
    shutil.rmtree(into / ".git", ignore_errors=True)


def install(library: SkillLibrary, user: str, source: str, *, replace: bool = False) -> Installed:
    """Install every skill in `source` (a folder, a zip file or a git URL) for `user`."""
    with tempfile.TemporaryDirectory(prefix="navi-skill-") as tmp:
        work = Path(tmp) / "src"
        tree = _GITHUB_TREE.match(source)
        if tree:
            clone(tree.group(1), work, tree.group(2))
            sub = tree.group(3) or ""
            folder = (work / sub).resolve()
            if not folder.is_relative_to(work.resolve()) or not folder.is_dir():
                raise InstallError(f"{source}: the repository has no folder {sub!r}")
            return install_tree(library, user, folder, source, replace=replace)
        path = Path(source).expanduser()
        if path.is_dir():
            return install_tree(library, user, path, str(path), replace=replace)
        if path.is_file():
            work.mkdir()
            unpack_zip(path, work, str(path))
            return install_tree(library, user, work, path.name, replace=replace)
        if is_git_url(source):
            clone(source, work)
            return install_tree(library, user, work, source, replace=replace)
        raise InstallError(f"{source}: no such folder or zip file, and not a git URL")
