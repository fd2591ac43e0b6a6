"""`navi skills add|list|show|remove|enable|disable`, run in-process as the real command: skills
installed from a folder, a zip (one with `../` names, a link or too many bytes refused whole) and
a local git repository cloned with `git`; a bad skill in a collection reported with its file and
line while the others install; one user's skills never another's."""

from __future__ import annotations

import json
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.skills import install as installing
from tests.helpers.skills import CSV_REPORT, HOUSE_STYLE, STYLE_GUIDE, SUMMARISE_PY, collection, write_skill

_register()
runner = CliRunner()


class World:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.skills = folder / "skills"
        self.env = {
            "DB_PATH": str(folder / "n.db"),
            "SESSION_FILES_DIR": str(folder / "files"),
            "TOOLS_DIR": str(folder / "tools"),
            "SKILLS_DIR": str(self.skills),
            "LOG_LEVEL": "WARNING",
            "NAVI_PORT": "9",
        }

    def navi(self, *args: str) -> Any:
        return runner.invoke(app, list(args), env=self.env)

    def ok(self, *args: str) -> str:
        result = self.navi(*args)
        assert result.exit_code == 0, result.output
        return str(result.stdout)

    def listed(self, *args: str) -> dict[str, dict[str, Any]]:
        return {s["name"]: s for s in json.loads(self.ok("skills", "list", "--json", *args))}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def zip_of(path: Path, members: dict[str, str], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def test_add_a_folder_list_show_disable_enable_remove(world: World) -> None:
    source = collection(world.folder / "collection")
    result = world.navi("skills", "add", str(source))
    assert result.exit_code == 1  # one skill of the collection is malformed
    assert "installed csv-report" in result.stdout and "installed house-style" in result.stdout
    assert "broken-skill/SKILL.md:4: malformed YAML front matter" in result.stderr
    listed = world.listed()
    assert sorted(listed) == ["csv-report", "house-style"]
    assert listed["csv-report"]["enabled"] and listed["csv-report"]["files"] == ["scripts/summarise.py"]
    assert listed["csv-report"]["metadata"] == {"author": "navi-tests", "version": "1.0"}
    assert (
        world.skills / "local" / "house-style" / "references" / "style-guide.md"
    ).read_text() == STYLE_GUIDE

    shown = world.ok("skills", "show", "house-style")
    assert shown.startswith(HOUSE_STYLE.rstrip("\n")) and "references/style-guide.md" in shown

    assert world.ok("skills", "disable", "csv-report").strip() == "disabled csv-report"
    assert world.listed()["csv-report"]["enabled"] is False
    assert "off csv-report" in world.ok("skills", "list")
    world.ok("skills", "enable", "csv-report")
    assert world.listed()["csv-report"]["enabled"] is True

    # Adding again is a clash unless --replace.
    again = world.navi("skills", "add", str(source / "csv-report"))
    assert again.exit_code == 1 and "already installed" in again.stderr
    world.ok("skills", "add", "--replace", str(source / "csv-report"))

    assert world.ok("skills", "remove", "csv-report").strip() == "removed csv-report"
    assert sorted(world.listed()) == ["house-style"]
    missing = world.navi("skills", "remove", "csv-report")
    assert missing.exit_code == 1 and "no skill named 'csv-report'" in missing.stderr


def test_add_a_zip_of_one_skill_and_a_zip_of_a_bare_skill(world: World) -> None:
    nested = zip_of(
        world.folder / "csv.zip",
        {"csv-report/SKILL.md": CSV_REPORT, "csv-report/scripts/summarise.py": SUMMARISE_PY},
    )
    assert "installed csv-report" in world.ok("skills", "add", str(nested))
    bare = zip_of(
        world.folder / "style.zip", {"SKILL.md": HOUSE_STYLE, "references/style-guide.md": STYLE_GUIDE}
    )
    assert "installed house-style" in world.ok("skills", "add", str(bare))
    assert sorted(world.listed()) == ["csv-report", "house-style"]
    installed = world.skills / "local" / "csv-report" / "scripts" / "summarise.py"
    assert installed.read_text() == SUMMARISE_PY


@pytest.mark.parametrize(
    ("members", "links", "words"),
    [
        ({"../evil/SKILL.md": CSV_REPORT}, None, "unsafe name in the zip"),
        ({"csv-report/SKILL.md": CSV_REPORT, "csv-report/../../x.txt": "x"}, None, "unsafe name in the zip"),
        ({"/abs/SKILL.md": CSV_REPORT}, None, "unsafe name in the zip"),
        ({"csv-report/SKILL.md": CSV_REPORT}, {"csv-report/scripts/passwd": "/etc/passwd"}, "links"),
    ],
)
def test_a_hostile_zip_is_refused_whole(
    world: World, members: dict[str, str], links: Any, words: str
) -> None:
    archive = zip_of(world.folder / "bad.zip", members, links)
    result = world.navi("skills", "add", str(archive))
    assert result.exit_code == 1
    assert words in result.stderr and "nothing was installed" in result.stderr
    assert world.listed() == {}
    assert not (world.folder / "evil").exists() and not (world.folder / "x.txt").exists()


def test_a_zip_over_the_size_limit_is_refused(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(installing, "MAX_ZIP_BYTES", 1000)
    archive = zip_of(world.folder / "big.zip", {"csv-report/SKILL.md": CSV_REPORT + "x" * 2000})
    result = world.navi("skills", "add", str(archive))
    assert result.exit_code == 1 and "size limit" in result.stderr
    assert world.listed() == {}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_add_from_a_local_git_repository(world: World) -> None:
    repo = world.folder / "repo"
    write_skill(repo / "skills", "csv-report", CSV_REPORT, {"scripts/summarise.py": SUMMARISE_PY})
    write_skill(repo / "skills", "house-style", HOUSE_STYLE, {"references/style-guide.md": STYLE_GUIDE})
    (repo / "README.md").write_text("A collection.\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "skills")
    out = world.ok("skills", "add", f"file://{repo}")
    assert "installed csv-report" in out and "installed house-style" in out
    assert sorted(world.listed()) == ["csv-report", "house-style"]
    assert not (world.skills / "local" / "csv-report" / ".git").exists()
    bad = world.navi("skills", "add", f"file://{world.folder}/no-such-repo")
    assert bad.exit_code == 1 and "git clone" in bad.stderr


def test_another_users_skills_are_their_own(world: World) -> None:
    assert world.navi("users", "add", "alice").exit_code == 0
    source = collection(world.folder / "collection")
    world.ok("skills", "add", "--user", "alice", str(source / "csv-report"))
    assert sorted(world.listed("--user", "alice")) == ["csv-report"]
    assert world.listed() == {}
    unknown = world.navi("skills", "list", "--user", "bob")
    assert unknown.exit_code == 2


def test_doctor_counts_the_skills_and_names_each_that_fails(world: World, fake_server: Any) -> None:
    source = collection(world.folder / "collection")
    world.env.update(SKILLS_DIRS=str(source), OLLAMA_HOST=fake_server.url)
    done = world.navi("doctor")
    assert "✓ skills: 2 skills\n" in done.stdout
    assert f"✗ skill {source}/broken-skill/SKILL.md:4: malformed YAML front matter" in done.stdout
    assert done.exit_code == 1


async def test_skills_installed_by_the_command_are_listed_and_used_by_the_model(world: World) -> None:
    """What `navi skills add` installed is what a Navi on the same SKILLS_DIR offers: the names in
    the system message, the instructions through use_skill, followed by the (scripted) model."""
    from navi.testing.script import Reply, ScriptedCall
    from tests.agent_helpers import scripted_runtime
    from tests.test_approvals import run_answering

    world.ok("skills", "add", str(collection(world.folder / "collection") / "house-style"))
    rt, _backend, script = await scripted_runtime(world.folder, planning_enabled=False)
    script.turn(
        Reply(tool_calls=[ScriptedCall("use_skill", {"name": "house-style"})]), "Warmly, the Lindqvists"
    )
    session = await rt.sessions.create("default")
    await run_answering(rt, session.id, "Write a note to the neighbours")
    first, second = script.of_kind("turn")
    assert "- house-style: Write letters in the family's house style." in (first.messages[0].content or "")
    assert "Always read `references/style-guide.md` before writing" in (second.messages[-1].content or "")
    await rt.aclose()


def test_a_github_folder_address_installs_that_folder_only(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`…/tree/REF/PATH`: REF cloned (here a local copy stands in for the network), PATH installed;
    a PATH climbing out of the clone is refused."""
    repo = world.folder / "repo"
    write_skill(repo / "skills", "csv-report", CSV_REPORT, {"scripts/summarise.py": SUMMARISE_PY})
    write_skill(repo / "skills", "house-style", HOUSE_STYLE)
    cloned: list[tuple[str, str | None]] = []

    def fake_clone(url: str, into: Path, ref: str | None = None) -> None:
        cloned.append((url, ref))
        import shutil

        shutil.copytree(repo, into)

    monkeypatch.setattr(installing, "clone", fake_clone)
    out = world.ok("skills", "add", "https://github.com/someone/skills/tree/main/skills/house-style")
    assert cloned == [("https://github.com/someone/skills", "main")]
    assert "installed house-style" in out and "csv-report" not in out
    escape = world.navi("skills", "add", "https://github.com/someone/skills/tree/main/../../etc")
    assert escape.exit_code == 1 and "has no folder" in escape.stderr
