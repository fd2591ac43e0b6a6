"""Whose skills are where, which are on, and what the model is told about them.

Each user has a folder of their own under SKILLS_DIR (`SKILLS_DIR/<user>/<skill>/SKILL.md`): what
`navi skills add`, the page and `write_skill` install into, and what `remove` may delete. The
owner also sees the folders of SKILLS_DIRS (skills kept elsewhere — a checkout of a published
collection, say: each folder, or the skills up to three levels below it), read in place and never
changed by Navi. Another user sees only their own.

Loading reads every SKILL.md each time it is asked (skills are small, and a folder edited by hand
is seen at the next turn); a skill that fails its checks, or whose name another skill already
took, is reported with its file and line and left out, and the rest load. Which skills are off is
kept per user in `SKILLS_DIR/<user>/.navi-skills.json`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from navi.skills.format import (
    SKILL_FILE,
    Skill,
    SkillError,
    SkillProblem,
    read_skill,
    render_skill_md,
    safe_relative,
)

STATE_FILE = ".navi-skills.json"
OWN = "own"
USER_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# The skills listing in the system message: at most this many characters (about 260 tokens), so
# the fixed prompt still fits a 4,096-token window (docs/skills.md has the figures).
LISTING_BUDGET = 900
LISTING_HEADING = "## Skills"
ONE_LINE = 110  # characters of a skill's description in the listing


MAX_DEPTH = 3  # how deep below a folder skills are looked for (a collection's skills/<name>/)


def find_skills(folder: Path) -> list[Path]:
    """The folder itself when it holds a SKILL.md, else the folders below it that do (at most
    `MAX_DEPTH` deep; hidden folders and links left out)."""
    if (folder / SKILL_FILE).exists() or (folder / SKILL_FILE).is_symlink():
        return [folder]
    found: list[Path] = []

    def visit(here: Path, depth: int) -> None:
        for child in sorted(here.iterdir()):
            if child.name.startswith(".") or child.is_symlink() or not child.is_dir():
                continue
            if (child / SKILL_FILE).exists() or (child / SKILL_FILE).is_symlink():
                found.append(child)
            elif depth < MAX_DEPTH:
                visit(child, depth + 1)

    visit(folder, 1)
    return found


class SkillNotFound(LookupError):
    pass


@dataclass
class LoadReport:
    skills: list[Skill] = field(default_factory=list)
    problems: list[SkillProblem] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)

    def enabled(self) -> list[Skill]:
        return [s for s in self.skills if s.name not in self.disabled]

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def _line_of_name(skill_md: Path) -> int:
    try:
        for i, line in enumerate(skill_md.read_text(encoding="utf-8").splitlines(), start=1):
            if line.startswith("name:"):
                return i
    except (OSError, UnicodeDecodeError):
        pass
    return 0


def _short(description: str, limit: int) -> str:
    text = " ".join(description.split())
    match = re.search(r"(?<=[.!?])\s", text)
    first = text[: match.start()] if match else text
    if len(first) <= limit:
        return first
    return first[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def listing_text(skills: Sequence[Skill], budget: int = LISTING_BUDGET) -> str | None:
    """The system message's skills section: one line each (name: what it is for), cut to `budget`
    characters — descriptions shortened first, then names only, then a count of the rest."""
    if not skills:
        return None
    head = (
        f"{LISTING_HEADING}\n\nInstructions for tasks, read when a task matches: call use_skill with "
        "the skill's name first, then follow what it says."
    )
    for limit in (ONE_LINE, 60, 0):
        lines = [f"- {s.name}: {_short(s.description, limit)}" if limit else f"- {s.name}" for s in skills]
        text = "\n".join([head, *lines])
        if len(text) <= budget:
            return text
    kept: list[str] = []
    for s in skills:
        line = f"- {s.name}"
        rest = len(skills) - len(kept) - 1
        tail = f"\n(and {rest} more: use_skill with name 'list' shows them all)" if rest else ""
        if len("\n".join([head, *kept, line])) + len(tail) > budget:
            break
        kept.append(line)
    rest = len(skills) - len(kept)
    return "\n".join([head, *kept, f"(and {rest} more: use_skill with name 'list' shows them all)"])


class SkillLibrary:
    def __init__(
        self, root: str | os.PathLike[str], shared: Sequence[str | os.PathLike[str]] = (), *, owner: str
    ) -> None:
        """`root`: SKILLS_DIR (the users' own folders); `shared`: SKILLS_DIRS, the owner's only."""
        self.root = Path(root)
        self.shared = [Path(p) for p in shared]
        self.owner = owner

    # --- where ---------------------------------------------------------------------------------
    def own_folder(self, user: str) -> Path:
        if not USER_PATTERN.fullmatch(user) or user in (".", ".."):
            raise ValueError(f"{user!r} cannot name a skills folder")
        return self.root / user

    def folders(self, user: str) -> list[tuple[Path, str]]:
        """(folder, source) pairs the user's skills are read from, in order: their own first."""
        own = [(self.own_folder(user), OWN)]
        return own + ([(p, str(p)) for p in self.shared] if user == self.owner else [])

    # --- reading -------------------------------------------------------------------------------
    def load(self, user: str) -> LoadReport:
        report = LoadReport(disabled=self._disabled(user))
        taken: dict[str, Skill] = {}
        for folder, source in self.folders(user):
            if not folder.is_dir():
                continue
            for child in find_skills(folder) if source != OWN else self._own_skills(folder):
                try:
                    skill = read_skill(child, source=source)
                except SkillError as exc:
                    report.problems.extend(exc.problems)
                    continue
                if skill.name in taken:
                    first = taken[skill.name]
                    report.problems.append(
                        SkillProblem(
                            str(skill.skill_md),
                            _line_of_name(skill.skill_md),
                            f"a skill named {skill.name!r} is already loaded from {first.skill_md}; "
                            "this one is left out (rename one of them)",
                        )
                    )
                    continue
                taken[skill.name] = skill
                report.skills.append(skill)
        return report

    @staticmethod
    def _own_skills(folder: Path) -> list[Path]:
        """A user's folder holds skills directly (`<user>/<skill>/SKILL.md`), as installed."""
        return [
            child
            for child in sorted(folder.iterdir())
            if not child.name.startswith(".")
            and child.is_dir()
            and not child.is_symlink()
            and ((child / SKILL_FILE).exists() or (child / SKILL_FILE).is_symlink())
        ]

    def enabled(self, user: str) -> list[Skill]:
        return self.load(user).enabled()

    def get(self, user: str, name: str) -> Skill:
        skill = self.load(user).get(name)
        if skill is None:
            raise SkillNotFound(f"there is no skill named {name!r}")
        return skill

    def listing(self, user: str) -> str | None:
        """The skills section of the user's system message (None: no skill is on)."""
        try:
            return listing_text(self.enabled(user))
        except (OSError, ValueError):
            return None

    # --- on and off ----------------------------------------------------------------------------
    def _state_path(self, user: str) -> Path:
        return self.own_folder(user) / STATE_FILE

    def _disabled(self, user: str) -> set[str]:
        try:
            data = json.loads(self._state_path(user).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        names = data.get("disabled") if isinstance(data, dict) else None
        return {str(n) for n in names} if isinstance(names, list) else set()

    def _save_disabled(self, user: str, disabled: set[str]) -> None:
        path = self._state_path(user)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{STATE_FILE}.tmp")
        tmp.write_text(json.dumps({"disabled": sorted(disabled)}, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def set_enabled(self, user: str, name: str, enabled: bool) -> Skill:
        skill = self.get(user, name)
        disabled = self._disabled(user)
        (disabled.discard if enabled else disabled.add)(name)
        self._save_disabled(user, disabled)
        return skill

    # --- changing ------------------------------------------------------------------------------
    def remove(self, user: str, name: str) -> Skill:
        skill = self.get(user, name)
        if skill.source != OWN:
            raise PermissionError(
                f"the skill {name!r} lives in {skill.source} (SKILLS_DIRS), which Navi never changes: "
                "remove it there, or disable it"
            )
        shutil.rmtree(skill.folder)
        self.set_enabled_quietly(user, name)
        return skill

    def set_enabled_quietly(self, user: str, name: str) -> None:
        """Forget that `name` was disabled (a removed skill installed again starts on)."""
        disabled = self._disabled(user)
        if name in disabled:
            disabled.discard(name)
            self._save_disabled(user, disabled)

    def install_folder(
        self, user: str, source: Path, *, label: str | None = None, replace: bool = False
    ) -> Skill:
        """Copy the checked skill in `source` into the user's folder (under its `name`). A skill of
        that name elsewhere is a clash; one of the user's own is replaced only with `replace`."""
        from navi.skills.format import parse_skill_md

        label = label or str(source)
        # The folder's name may differ from the skill's (a zip's or a clone's folder): the name decides.
        skill_md = source / SKILL_FILE
        try:
            text = (
                skill_md.read_text(encoding="utf-8")
                if skill_md.is_file() and not skill_md.is_symlink()
                else None
            )
        except (OSError, UnicodeDecodeError):
            text = None  # read_skill below says what is wrong with it
        name = parse_skill_md(text, file=f"{label}/{SKILL_FILE}")["name"] if text is not None else source.name
        own = self.own_folder(user)
        with tempfile.TemporaryDirectory(prefix=".install-", dir=self._made(own)) as tmp:
            staged = Path(tmp) / name
            shutil.copytree(source, staged, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            read_skill(staged, label=label, source=OWN)  # checks links, sizes, format
            existing = self.load(user).get(name)
            if existing is not None and (existing.source != OWN or not replace):
                where = existing.skill_md if existing.source != OWN else "your skills"
                raise SkillError(
                    [
                        SkillProblem(
                            f"{label}/{SKILL_FILE}",
                            _line_of_name(staged / SKILL_FILE),
                            f"a skill named {name!r} is already installed ({where}); remove it first"
                            + ("" if existing.source != OWN else " or replace it"),
                        )
                    ]
                )
            target = own / name
            if target.exists():
                shutil.rmtree(target)
            os.replace(staged, target)
        self.set_enabled_quietly(user, name)
        return read_skill(target, source=OWN)

    def write(
        self,
        user: str,
        name: str,
        description: str,
        body: str,
        files: dict[str, str] | None = None,
        *,
        replace: bool = True,
    ) -> Skill:
        """Save a skill the model wrote (SKILL.md plus files such as scripts/x.py), through the same
        checks as any other; a skill of another source with that name is a clash."""
        problems: list[SkillProblem] = []
        with tempfile.TemporaryDirectory(prefix=".write-", dir=self._made(self.own_folder(user))) as tmp:
            folder = Path(tmp) / (name if name and "/" not in name and name not in (".", "..") else "skill")
            folder.mkdir()
            (folder / SKILL_FILE).write_text(render_skill_md(name, description, body), encoding="utf-8")
            for rel, content in (files or {}).items():
                clean = safe_relative(rel)
                if clean is None or clean == SKILL_FILE:
                    problems.append(SkillProblem(rel, 0, "a file path must be relative, inside the skill"))
                    continue
                path = folder / clean
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
            if problems:
                raise SkillError(problems)
            return self.install_folder(user, folder, label=name, replace=replace)

    @staticmethod
    def _made(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder


def describe(skill: Skill, *, enabled: bool) -> dict[str, object]:
    """A skill as `navi skills list --json` and `GET /skills` show it."""
    return {
        "name": skill.name,
        "description": skill.description,
        "enabled": enabled,
        "source": skill.source,
        "path": str(skill.folder),
        "license": skill.license,
        "compatibility": skill.compatibility,
        "allowed_tools": list(skill.allowed_tools),
        "metadata": dict(skill.metadata),
        "files": skill.files(),
        "version": skill.version(),
    }
