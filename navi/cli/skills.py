"""`navi skills add|list|show|remove|enable|disable`: Agent Skills, straight from their folders.

The owner's skills (`local`: SKILLS_DIR/local/ and SKILLS_DIRS) unless `--user NAME` names
another user's (SKILLS_DIR/NAME/). `add` takes a folder, a zip file or a git URL (docs/skills.md);
every skill in it is checked as Navi checks it when loading, and a bad one is reported with its
file and line while the others are installed. A running Navi sees the change at its next turn.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP, fail, settings_or_exit
from navi.cli.stores import UserOption, known_user, with_stores

app = typer.Typer(
    help="Agent Skills: add, list, show, remove, enable, disable.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _library(user: str) -> Any:
    from navi.compose import parts
    from navi.sessions.models import DEFAULT_OWNER

    settings = settings_or_exit()
    if user != DEFAULT_OWNER:

        async def check(rt: Any) -> str:
            return await known_user(rt, user)

        with_stores(check)
    return parts.skill_library(settings)


def _problems(problems: list[Any]) -> None:
    for problem in problems:
        typer.echo(f"navi: {problem}", err=True)


@app.command("add")
def add(
    source: Annotated[
        str, typer.Argument(metavar="PATH|ZIP|GIT-URL", help="A folder, a zip file or a git URL.")
    ],
    replace: Annotated[bool, typer.Option("--replace", help="Replace your skill of the same name.")] = False,
    user: UserOption = "local",
) -> None:
    """Install the skills in a folder, a zip file or a git repository."""
    from navi.skills import SkillError
    from navi.skills.install import InstallError, install

    library = _library(user)
    try:
        done = install(library, user, source, replace=replace)
    except SkillError as exc:
        _problems(exc.problems)
        fail("nothing was installed", 1)
    except InstallError as exc:
        fail(str(exc), 1)
    except OSError as exc:  # SKILLS_DIR cannot be written
        fail(
            f"cannot install into {library.own_folder(user)}: {exc.strerror or exc} — "
            "set SKILLS_DIR to a writable folder"
        )
    for skill in done.skills:
        typer.echo(f"installed {skill.name}: {skill.description[:100]}")
    _problems(done.problems)
    if not done.skills:
        fail("nothing was installed", 1)
    if done.problems:
        raise typer.Exit(1)


@app.command("list")
def list_skills(as_json: JsonOption = False, user: UserOption = "local") -> None:
    """Every skill, on or off, and every skill that failed to load (with its file and line)."""
    from navi.skills.library import describe

    report = _library(user).load(user)
    if as_json:
        data = [describe(s, enabled=s.name not in report.disabled) for s in report.skills]
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif not report.skills:
        typer.echo("No skills. Add one with `navi skills add PATH|ZIP|GIT-URL`.")
    for skill in [] if as_json else report.skills:
        state = "off" if skill.name in report.disabled else "on "
        where = "" if skill.source == "own" else f"  [{skill.source}]"
        typer.echo(f"{state} {skill.name:<24} {skill.description[:80]}{where}")
    _problems(report.problems)


@app.command("show")
def show(name: str, user: UserOption = "local") -> None:
    """A skill's SKILL.md and its files."""
    from navi.skills import SkillNotFound

    try:
        skill = _library(user).get(user, name)
    except SkillNotFound as exc:
        fail(str(exc), 1)
    typer.echo(skill.skill_md.read_text(encoding="utf-8").rstrip("\n"))
    files = skill.files()
    if files:
        typer.echo("\nFiles:\n" + "\n".join(f"  {f}" for f in files))
    typer.echo(f"\n{skill.folder}")


@app.command("remove")
def remove(name: str, user: UserOption = "local") -> None:
    """Delete one of your skills (a SKILLS_DIRS skill can only be disabled)."""
    from navi.skills import SkillNotFound

    try:
        skill = _library(user).remove(user, name)
    except (SkillNotFound, PermissionError) as exc:
        fail(str(exc), 1)
    typer.echo(f"removed {skill.name}")


def _switch(name: str, user: str, on: bool) -> None:
    from navi.skills import SkillNotFound

    try:
        skill = _library(user).set_enabled(user, name, on)
    except SkillNotFound as exc:
        fail(str(exc), 1)
    typer.echo(f"{'enabled' if on else 'disabled'} {skill.name}")


@app.command("enable")
def enable(name: str, user: UserOption = "local") -> None:
    """Offer the skill to the model again."""
    _switch(name, user, True)


@app.command("disable")
def disable(name: str, user: UserOption = "local") -> None:
    """Keep the skill installed but out of the model's list."""
    _switch(name, user, False)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="skills")
