"""The Agent Skills format: a folder with `SKILL.md` (YAML front matter, then Markdown instructions)
and, optionally, `scripts/`, `references/` and `assets/`.

The front matter is read with PyYAML's safe loader and checked here, before anything is listed,
written or installed: `name` (1–64 lowercase letters, digits and single hyphens, not starting or
ending with one, the same as the folder's name), `description` (the format says at most 1,024
characters, and `write_skill` keeps to it; published skills with up to 4,096 are read), optional
`license`, `compatibility` (≤ 500 characters), `allowed-tools` (a space-separated string) and
`metadata` (a map of strings). Other keys are kept and ignored, as other clients write their own.
Every problem names the file and the line it is on (`SkillProblem`).

Limits keep a skill small enough to read and hash at every use: `MAX_SKILL_MD` for SKILL.md,
`MAX_FILES` and `MAX_TOTAL_BYTES` for the whole folder. Links are never followed: a skill holding
a symbolic link is refused (it could point anywhere).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024  # the published limit, which `write_skill` keeps
# …and what loading accepts: published skills exist with longer ones (the listing cuts them anyway).
MAX_DESCRIPTION_READ = 4096
MAX_COMPATIBILITY = 500
MAX_SKILL_MD = 256 * 1024
MAX_FILES = 500
MAX_TOTAL_BYTES = 20 * 1024 * 1024
FOLDERS = ("scripts", "references", "assets")
# metadata keys Navi reads: `network: "true"` asks for the network when its scripts run.
NETWORK_KEY = "network"


@dataclass(frozen=True)
class SkillProblem:
    """Why a skill was not loaded: the file, the line (1-based; 0 when no line applies), the reason."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class SkillError(ValueError):
    """A skill that cannot be loaded, written or installed; `problems` says where and why."""

    def __init__(self, problems: list[SkillProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    body: str  # SKILL.md after its front matter
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    source: str = ""  # "own" (the user's folder in SKILLS_DIR) or the SKILLS_DIRS folder it is in

    @property
    def skill_md(self) -> Path:
        return self.folder / SKILL_FILE

    @property
    def wants_network(self) -> bool:
        return str(self.metadata.get(NETWORK_KEY, "")).strip().lower() in ("true", "yes", "1")

    def files(self) -> list[str]:
        """The skill's files besides SKILL.md, as paths relative to its folder, sorted."""
        return [rel for rel, _ in walk(self.folder) if rel != SKILL_FILE]

    def scripts(self) -> list[str]:
        return [f for f in self.files() if f.startswith("scripts/")]

    def version(self) -> str:
        """A hash of every file's path and content: any change to any file is a new version."""
        return version_of(self.folder)


def walk(folder: Path) -> list[tuple[str, Path]]:
    """Every regular file under `folder` (relative path with '/', path), hidden ones included but
    a `.git` folder left out, sorted; a link or a special file raises `SkillError`."""
    out: list[tuple[str, Path]] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".git")  # a checkout's history is not the skill
        for name in [*dirs, *files]:
            path = Path(root) / name
            st = path.lstat()
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(st.st_mode):
                raise SkillError([SkillProblem(rel, 0, "symbolic links are not allowed in a skill")])
            if name in files:
                if not stat.S_ISREG(st.st_mode):
                    raise SkillError([SkillProblem(rel, 0, "only regular files are allowed in a skill")])
                out.append((rel, path))
    return sorted(out)


def version_of(folder: Path) -> str:
    digest = hashlib.sha256()
    for rel, path in walk(folder):
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def check_size(folder: Path, label: str) -> list[SkillProblem]:
    """Problems with the folder's file count and total size (and links, special files)."""
    try:
        files = walk(folder)
    except SkillError as exc:
        return [SkillProblem(f"{label}/{p.file}", p.line, p.message) for p in exc.problems]
    if len(files) > MAX_FILES:
        return [SkillProblem(label, 0, f"the skill has {len(files)} files; at most {MAX_FILES} are allowed")]
    total = sum(path.stat().st_size for _, path in files)
    if total > MAX_TOTAL_BYTES:
        return [
            SkillProblem(
                label,
                0,
                f"the skill is {total:,} bytes; at most {MAX_TOTAL_BYTES:,} are allowed (size limit)",
            )
        ]
    return []


def _key_lines(lines: list[str]) -> dict[str, int]:
    """Top-level key → its line number in SKILL.md (the front matter starts on line 2)."""
    found: dict[str, int] = {}
    for i, line in enumerate(lines, start=2):
        match = re.match(r"^([A-Za-z0-9_-]+)\s*:", line)
        if match:
            found.setdefault(match.group(1), i)
    return found


def split_front_matter(text: str, file: str) -> tuple[list[str], str, int]:
    """(front matter lines, body, the body's first line number); `SkillError` when there is none."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").strip() != "---":
        raise SkillError([SkillProblem(file, 1, "SKILL.md must start with a '---' line (YAML front matter)")])
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").strip() == "---":
            return [ln.rstrip("\r") for ln in lines[1:i]], "\n".join(lines[i + 1 :]), i + 2
    raise SkillError([SkillProblem(file, 1, "the front matter opened on line 1 is never closed with '---'")])


def parse_skill_md(text: str, *, file: str, folder_name: str | None = None) -> dict[str, Any]:
    """The checked front matter of a SKILL.md text and its body (key "body"). `folder_name`, when
    given, must equal `name`. Raises `SkillError` listing every problem found."""
    import yaml

    head, body, _ = split_front_matter(text, file)
    try:
        data = yaml.safe_load("\n".join(head)) if head else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start is not None and start.line + 2 != line:
            problem += f" ({context} on line {start.line + 2})"
        raise SkillError([SkillProblem(file, line, f"malformed YAML front matter: {problem}")]) from None
    if not isinstance(data, dict):
        raise SkillError(
            [SkillProblem(file, 2, "the front matter must be a YAML mapping (key: value lines)")]
        )
    at = _key_lines(head)
    problems: list[SkillProblem] = []

    def bad(key: str, message: str) -> None:
        problems.append(SkillProblem(file, at.get(key, 2), message))

    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        bad("name", "`name` is required: 1-64 lowercase letters, digits and hyphens")
    elif len(name) > MAX_NAME or not NAME_PATTERN.fullmatch(name):
        bad(
            "name",
            f"`name` {name!r} is not valid: 1-{MAX_NAME} lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen",
        )
    elif folder_name is not None and name != folder_name:
        bad("name", f"`name` {name!r} must be the same as the skill's folder name {folder_name!r}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        bad("description", "`description` is required: what the skill does and when to use it")
    elif len(description) > MAX_DESCRIPTION_READ:
        bad("description", f"`description` is {len(description)} characters; at most {MAX_DESCRIPTION_READ}")
    for key, limit in (("license", 1000), ("compatibility", MAX_COMPATIBILITY)):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            bad(key, f"`{key}` must be a string")
        elif isinstance(value, str) and len(value) > limit:
            bad(key, f"`{key}` is {len(value)} characters; at most {limit}")
    tools = data.get("allowed-tools")
    if tools is not None and not isinstance(tools, str | list):
        bad("allowed-tools", "`allowed-tools` must be a space-separated string of tool names")
    metadata = data.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata)
    ):
        bad("metadata", "`metadata` must be a mapping of names to values")
    if problems:
        raise SkillError(problems)
    allowed = tuple(str(t) for t in tools) if isinstance(tools, list) else tuple(str(tools or "").split())
    return {
        "name": name,
        "description": " ".join(str(description).split()),
        "license": str(data.get("license") or ""),
        "compatibility": str(data.get("compatibility") or ""),
        "allowed_tools": allowed,
        "metadata": {str(k): "" if v is None else str(v) for k, v in (metadata or {}).items()},
        "body": body.strip("\n"),
    }


def read_skill(folder: Path, *, label: str | None = None, source: str = "") -> Skill:
    """The skill in `folder`, checked (format, name = folder name, limits); `SkillError` otherwise.
    `label` is how problems name the folder (its path by default)."""
    label = label or str(folder)
    path = folder / SKILL_FILE
    file = f"{label}/{SKILL_FILE}"
    try:
        st = path.lstat()
    except FileNotFoundError:
        raise SkillError([SkillProblem(file, 0, "there is no SKILL.md in this folder")]) from None
    if not stat.S_ISREG(st.st_mode):
        raise SkillError([SkillProblem(file, 0, "SKILL.md must be a regular file (not a link)")])
    if st.st_size > MAX_SKILL_MD:
        raise SkillError(
            [
                SkillProblem(
                    file, 0, f"SKILL.md is {st.st_size:,} bytes; at most {MAX_SKILL_MD:,} (size limit)"
                )
            ]
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise SkillError([SkillProblem(file, line, "SKILL.md is not UTF-8 text")]) from None
    fields = parse_skill_md(text.lstrip("\ufeff"), file=file, folder_name=folder.name)
    problems = check_size(folder, label)
    if problems:
        raise SkillError(problems)
    return Skill(folder=folder, source=source, **fields)


def render_skill_md(
    name: str, description: str, body: str, *, license: str = "", metadata: dict[str, str] | None = None
) -> str:
    """A SKILL.md in the published format (what `write_skill` saves)."""
    import yaml

    head: dict[str, Any] = {"name": name, "description": description}
    if license:
        head["license"] = license
    if metadata:
        head["metadata"] = dict(metadata)
    front = yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{body.strip()}\n"


def safe_relative(rel: str) -> str | None:
    """`rel` as a clean relative path inside a skill ('/'-separated), or None when it is absolute,
    climbs out ('..'), or holds a NUL or a backslash."""
    if not rel or "\x00" in rel or "\\" in rel or rel.startswith("/"):
        return None
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return "/".join(parts)
