"""Agent Skills: `GET /skills`, `POST /skills` (a zip as the body), `GET|PATCH|DELETE /skills/{name}`.

Each user sees their own skills (and the owner also those of SKILLS_DIRS); another user's skill
answers 404 like one that does not exist. A zip is checked before anything is written (no `..`
or absolute names, no links, a size limit): a bad one answers 422 `bad_skill` naming the member;
a skill in it whose SKILL.md is malformed is listed in `problems` with its file and line, and the
others are installed. See docs/skills.md.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import Path as PathParam
from fastapi import Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import BadRequest, BadSkill, Conflict, NotFound, Unavailable
from navi.api.routing import api_router
from navi.skills import SkillError, SkillLibrary, SkillNotFound, SkillProblem
from navi.skills.install import InstallError, install
from navi.skills.library import describe

router = api_router(prefix="/skills", tags=["skills"])
Name = Annotated[str, PathParam(min_length=1, max_length=64, pattern=r"^[a-z0-9-]+$")]


class SkillOut(BaseModel):
    name: str
    description: str
    enabled: bool
    source: str = Field(description='"own" (installed for you) or the SKILLS_DIRS folder it is read from')
    license: str = ""
    compatibility: str = ""
    allowed_tools: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    files: list[str] = Field(default_factory=list, description="Files besides SKILL.md")
    version: str = Field(description="SHA-256 over every file: a script's approval is remembered per version")


class SkillDetail(SkillOut):
    skill_md: str = Field(description="The whole SKILL.md")


class Problem(BaseModel):
    file: str
    line: int = Field(description="1-based; 0 when no line applies")
    message: str


class SkillList(BaseModel):
    skills: list[SkillOut]
    problems: list[Problem] = Field(default_factory=list, description="Skills that failed to load, and why")


class Installed(BaseModel):
    installed: list[SkillOut]
    problems: list[Problem] = Field(default_factory=list)


class SkillChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool


def _out(library: SkillLibrary, user: str, skill: Any, disabled: set[str]) -> SkillOut:
    data = describe(skill, enabled=skill.name not in disabled)
    data.pop("path", None)  # where the server keeps files is not the client's business
    return SkillOut.model_validate(data)


def _problem(library: SkillLibrary, user: str, problem: SkillProblem) -> Problem:
    own = f"{library.own_folder(user)}/"
    file = problem.file.removeprefix(own)
    return Problem(file=file, line=problem.line, message=problem.message.replace(own, ""))


@router.get("", response_model=SkillList, summary="Your skills, and those that failed to load")
async def list_skills(runtime: RuntimeDep, user: CurrentUser) -> SkillList:
    library = runtime.skills
    report = await asyncio.to_thread(library.load, user)
    return SkillList(
        skills=[_out(library, user, s, report.disabled) for s in report.skills],
        problems=[_problem(library, user, p) for p in report.problems],
    )


@router.get("/{name}", response_model=SkillDetail, summary="One skill, with its SKILL.md")
async def get_skill(name: Name, runtime: RuntimeDep, user: CurrentUser) -> SkillDetail:
    library = runtime.skills
    report = await asyncio.to_thread(library.load, user)
    skill = report.get(name)
    if skill is None:
        raise NotFound(f"no skill named '{name}'")
    out = _out(library, user, skill, report.disabled)
    return SkillDetail(**out.model_dump(), skill_md=skill.skill_md.read_text(encoding="utf-8"))


@router.post(
    "",
    status_code=201,
    response_model=Installed,
    summary="Install the skills in a zip file (the request body, application/zip)",
    openapi_extra={
        "requestBody": {"content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}}
    },
)
async def add_skills(
    request: Request,
    runtime: RuntimeDep,
    user: CurrentUser,
    replace: Annotated[bool, Query(description="Replace your skill of the same name")] = False,
) -> Installed:
    library = runtime.skills
    data = await request.body()
    if not data:
        raise BadRequest("send the skill's zip file as the request body")
    with tempfile.TemporaryDirectory(prefix="navi-skill-upload-") as tmp:
        archive = Path(tmp) / "skill.zip"
        archive.write_bytes(data)
        try:
            done = await asyncio.to_thread(install, library, user, str(archive), replace=replace)
        except SkillError as exc:
            shown = [_problem(library, user, p) for p in exc.problems]
            raise BadSkill(
                "; ".join(f"{p.file.replace(str(archive), 'the zip')}: {p.message}" for p in shown)
            ) from None
        except InstallError as exc:
            raise BadSkill(str(exc).replace(str(archive), "the zip")) from None
        except OSError as exc:  # SKILLS_DIR cannot be written: the server's problem, not the zip's
            raise Unavailable(
                f"skills cannot be installed here: {exc.strerror or 'the skills folder'}"
            ) from None
    problems = [_problem(library, user, p) for p in done.problems]
    if not done.skills:
        raise BadSkill(
            "nothing was installed: " + "; ".join(f"{p.file}:{p.line}: {p.message}" for p in problems)
        )
    report = await asyncio.to_thread(library.load, user)
    return Installed(
        installed=[_out(library, user, s, report.disabled) for s in done.skills], problems=problems
    )


@router.patch("/{name}", response_model=SkillOut, summary="Turn a skill on or off")
async def change_skill(name: Name, change: SkillChange, runtime: RuntimeDep, user: CurrentUser) -> SkillOut:
    library = runtime.skills
    try:
        await asyncio.to_thread(library.set_enabled, user, name, change.enabled)
    except SkillNotFound:
        raise NotFound(f"no skill named '{name}'") from None
    report = await asyncio.to_thread(library.load, user)
    skill = report.get(name)
    if skill is None:
        raise NotFound(f"no skill named '{name}'")
    return _out(library, user, skill, report.disabled)


@router.delete("/{name}", status_code=204, summary="Remove one of your skills")
async def remove_skill(name: Name, runtime: RuntimeDep, user: CurrentUser) -> Response:
    try:
        await asyncio.to_thread(runtime.skills.remove, user, name)
    except SkillNotFound:
        raise NotFound(f"no skill named '{name}'") from None
    except PermissionError as exc:
        raise Conflict(str(exc)) from None
    return Response(status_code=204)
