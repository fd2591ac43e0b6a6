"""Agent Skills through the agent loop (scripted model, real tools, the real sandbox): the names
in the system message, the instructions only after `use_skill`, references on demand, a script
run in bubblewrap after an approval remembered per skill and version, a changed script asking
again, a skill the model writes, and a malformed skill or a clash reported with file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from navi.agent.events import ToolEvent
from navi.compose import Runtime
from navi.skills.format import SkillError, parse_skill_md
from navi.skills.library import LISTING_BUDGET, LISTING_HEADING, SkillLibrary, listing_text
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import scripted_runtime
from tests.helpers.skills import CSV_REPORT, STYLE_GUIDE, SUMMARISE_PY, collection, write_skill
from tests.test_approvals import asked, resolved, run_answering

CSV = "apples,pears\n1,2\n3,4\n"


async def runtime(tmp_path: Path, *turns: Any, **settings: Any) -> tuple[Runtime, Any, str]:
    shared = collection(tmp_path / "collection")
    settings.setdefault("skills_dirs", str(shared))
    rt, _backend, script = await scripted_runtime(tmp_path, planning_enabled=False, **settings)
    script.turn(*turns)
    session = await rt.sessions.create("default")
    return rt, script, session.id


def tool_events(events: list[Any]) -> list[ToolEvent]:
    return [e for e in events if isinstance(e, ToolEvent)]


def tool_texts(request: Any) -> list[str]:
    return [m.content or "" for m in request.messages if m.role == "tool"]


async def test_names_in_the_prompt_and_the_body_only_after_use_skill(tmp_path: Path) -> None:
    rt, script, sid = await runtime(
        tmp_path,
        Reply(tool_calls=[ScriptedCall("use_skill", {"name": "house-style"})]),
        Reply(
            tool_calls=[
                ScriptedCall("use_skill", {"name": "house-style", "file": "references/style-guide.md"})
            ]
        ),
        "Warmly, the Lindqvists.",
    )
    events = await run_answering(rt, sid, "Write a thank-you letter to Grandma")
    first, second, third = script.of_kind("turn")
    system = first.messages[0].content or ""
    assert LISTING_HEADING in system
    assert "- csv-report: Summarise a CSV file into a short report of row counts and column totals." in system
    assert "- house-style: Write letters in the family's house style." in system
    assert "broken-skill" not in system  # malformed: left out
    assert "Always read `references/style-guide.md`" not in system  # the body is not in the prompt
    assert tool_texts(first) == []
    # use_skill hands over the body and the list of files, not the reference itself.
    body = tool_texts(second)[-1]
    assert "# House style" in body and "references/style-guide.md" in body
    assert "Lindqvists" not in body
    # The reference on demand.
    assert tool_texts(third)[-1] == STYLE_GUIDE
    assert [e.success for e in tool_events(events)] == [True, True]
    # The listing is the same on every call of the session (the prompt cache's prefix).
    assert second.messages[0].content == third.messages[0].content == system
    # What GET /sessions/{id}/context shows is what the model got.
    session = await rt.sessions.get(sid)
    assert session is not None
    profile = rt.profiles.of_session(session.profile_id)
    assert (rt.agent.model_view(profile, [], owner=session.owner)[0].content or "") == system
    await rt.aclose()


async def test_a_malformed_skill_and_a_name_clash_are_reported_with_file_and_line(tmp_path: Path) -> None:
    shared = collection(tmp_path / "collection")
    other = tmp_path / "other"
    write_skill(other, "csv-report", CSV_REPORT)  # the same name as the collection's
    library = SkillLibrary(tmp_path / "skills", [shared, other], owner="local")
    report = library.load("local")
    assert sorted(s.name for s in report.skills) == ["csv-report", "house-style"]
    problems = [str(p) for p in report.problems]
    assert len(problems) == 2
    broken = next(p for p in problems if "broken-skill" in p)
    assert broken.startswith(f"{shared}/broken-skill/SKILL.md:4: malformed YAML front matter")
    assert "while parsing a flow sequence on line 3" in broken
    clash = next(p for p in problems if "already loaded" in p)
    assert clash.startswith(f"{other}/csv-report/SKILL.md:2: a skill named 'csv-report' is already loaded")
    assert str(shared / "csv-report" / "SKILL.md") in clash
    # Another user sees none of the owner's SKILLS_DIRS.
    assert library.load("alice").skills == []


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("name: x\n", 1, "must start with a '---' line"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", 2, "is not valid"),
        ("---\nname: ok\n---\n", 2, "`description` is required"),
        ("---\nname: ok\ndescription: d\nmetadata: [1]\n---\n", 4, "`metadata` must be a mapping"),
        ("---\nname: ok\ndescription: d\n", 1, "never closed"),
        ("---\nname: other\ndescription: d\n---\n", 2, "must be the same as the skill's folder name"),
    ],
)
def test_front_matter_problems_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(SkillError) as caught:
        parse_skill_md(text, file="ok/SKILL.md", folder_name="ok")
    problem = caught.value.problems[0]
    assert (problem.file, problem.line) == ("ok/SKILL.md", line)
    assert words in problem.message


def test_a_skill_over_the_size_limit_is_refused_and_the_rest_load(tmp_path: Path) -> None:
    root = collection(tmp_path / "collection")
    big = write_skill(root, "huge", "---\nname: huge\ndescription: too big\n---\n" + "x" * 300_000)
    report = SkillLibrary(tmp_path / "skills", [root], owner="local").load("local")
    assert "huge" not in [s.name for s in report.skills] and "csv-report" in [s.name for s in report.skills]
    assert any(str(p).startswith(f"{big}/SKILL.md") and "size limit" in str(p) for p in report.problems)


def test_the_listing_fits_its_budget_with_many_skills(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(150):
        write_skill(
            root,
            f"skill-{i:03d}",
            f"---\nname: skill-{i:03d}\ndescription: {'Does a long and detailed thing. ' * 20}\n---\nBody.\n",
        )
    skills = SkillLibrary(tmp_path / "skills", [root], owner="local").enabled("local")
    text = listing_text(skills)
    assert text is not None and len(text) <= LISTING_BUDGET
    assert "- skill-000" in text and "more: use_skill with name 'list'" in text
    few = listing_text(skills[:3])
    assert few is not None and "- skill-000: Does a long and detailed thing." in few


async def test_use_skill_list_shows_every_skill(tmp_path: Path) -> None:
    rt, script, sid = await runtime(
        tmp_path, Reply(tool_calls=[ScriptedCall("use_skill", {"name": "list"})]), "ok"
    )
    events = await run_answering(rt, sid, "which skills do you have?")
    (done,) = tool_events(events)
    assert done.success and "- csv-report: Summarise a CSV" in done.result and "- house-style:" in done.result
    await rt.aclose()


async def test_a_script_runs_in_the_sandbox_after_approval_and_a_changed_script_asks_again(
    tmp_path: Path,
) -> None:
    run = ScriptedCall(
        "run_skill_script",
        {"skill": "csv-report", "script": "scripts/summarise.py", "stdin": CSV, "args": ["--brief"]},
    )
    rt, script, sid = await runtime(
        tmp_path,
        Reply(tool_calls=[run]),
        Reply(tool_calls=[run]),  # the same version: "Always" covers it
        "apples=4, pears=6",
        navi_approval_mode="smart",
        sql=True,
    )
    assert rt.sandbox.active, "bubblewrap must work here (scripts/test-deps)"
    events = await run_answering(rt, sid, "Summarise this CSV", ["always"])
    (question,) = asked(events)
    assert question.tool == "run_skill_script"
    assert "the skill 'csv-report' wants to run scripts/summarise.py" in question.reason
    assert "no network" in question.reason
    assert (
        question.always_scope is not None
        and "every script of the skill 'csv-report' as it is now" in question.always_scope
    )
    first, second = tool_events(events)
    assert first.success and second.success
    assert "rows=2\napples=4\npears=6" in first.result
    assert "interfaces=lo" in first.result  # no network: only the loopback of its own namespace
    assert "args=['--brief']" in first.result and "skill_dir_ok=True" in first.result
    grants = await rt.approvals.grants.grants("local")
    assert [g.tool for g in grants] == ["run_skill_script"]
    assert grants[0].subject.startswith("csv-report@")

    # The script changes: the remembered answer no longer covers it.
    script_file = tmp_path / "collection" / "csv-report" / "scripts" / "summarise.py"
    script_file.write_text(script_file.read_text() + 'print("changed")\n')
    script.turn(Reply(tool_calls=[run]), "done")
    events = await run_answering(rt, sid, "Again please", ["deny"])
    assert len(asked(events)) == 1 and [r.decision for r in resolved(events)] == ["deny"]
    (refused,) = tool_events(events)
    assert not refused.success and "declined" in refused.result
    await rt.aclose()


async def test_a_script_that_asks_for_the_network_says_so(tmp_path: Path) -> None:
    shared = tmp_path / "collection"
    write_skill(
        shared,
        "fetcher",
        '---\nname: fetcher\ndescription: Fetch things.\nmetadata:\n  network: "true"\n---\nRun it.\n',
        {"scripts/ifaces.py": "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))\n"},
    )
    run = ScriptedCall("run_skill_script", {"skill": "fetcher", "script": "scripts/ifaces.py"})
    rt, script, sid = await runtime(tmp_path, Reply(tool_calls=[run]), "ok", navi_approval_mode="smart")
    events = await run_answering(rt, sid, "fetch", ["allow"])
    (question,) = asked(events)
    assert "it may use the network" in question.reason
    (done,) = tool_events(events)
    assert done.success
    await rt.aclose()


async def test_scripts_outside_scripts_and_unknown_skills_are_refused(tmp_path: Path) -> None:
    rt, script, sid = await runtime(
        tmp_path,
        Reply(
            tool_calls=[
                ScriptedCall("run_skill_script", {"skill": "csv-report", "script": "../../etc/passwd"})
            ]
        ),
        Reply(tool_calls=[ScriptedCall("run_skill_script", {"skill": "csv-report", "script": "SKILL.md"})]),
        Reply(
            tool_calls=[ScriptedCall("use_skill", {"name": "csv-report"})]
        ),  # three failures would end the turn
        Reply(
            tool_calls=[ScriptedCall("use_skill", {"name": "house-style", "file": "../csv-report/SKILL.md"})]
        ),
        Reply(tool_calls=[ScriptedCall("use_skill", {"name": "nope"})]),
        "ok",
    )
    events = await run_answering(rt, sid, "try things")
    results = [r for r in tool_events(events) if r.args != {"name": "csv-report"}]
    assert [r.success for r in results] == [False, False, False, False]
    assert "scripts/ folder" in results[0].result and "scripts/ folder" in results[1].result
    assert "a path inside the skill" in results[2].result
    assert "no skill named 'nope'" in results[3].result and "csv-report" in results[3].result
    await rt.aclose()


async def test_a_disabled_skill_is_not_listed_nor_used(tmp_path: Path) -> None:
    rt, script, sid = await runtime(
        tmp_path, Reply(tool_calls=[ScriptedCall("use_skill", {"name": "csv-report"})]), "ok"
    )
    rt.skills.set_enabled("local", "csv-report", False)
    events = await run_answering(rt, sid, "hello")
    system = script.of_kind("turn")[0].messages[0].content or ""
    assert "csv-report" not in system and "house-style" in system
    (done,) = tool_events(events)
    assert not done.success and "disabled" in done.result
    await rt.aclose()


async def test_the_model_saves_a_skill_that_is_listed_from_the_next_message(tmp_path: Path) -> None:
    good = {
        "name": "backup-photos",
        "description": "Copy the photos folder to the NAS. Use when the user asks for a photo backup.",
        "instructions": "Run scripts/backup.sh with the folder as its argument.",
        "files": {"scripts/backup.sh": 'echo backing up "$1"\n'},
    }
    bad = {**good, "name": "sneaky", "files": {"../escape.sh": "echo no"}}
    rt, script, sid = await runtime(
        tmp_path,
        Reply(tool_calls=[ScriptedCall("write_skill", bad)]),
        Reply(tool_calls=[ScriptedCall("write_skill", good)]),
        "Saved.",
        navi_approval_mode="smart",
    )
    events = await run_answering(rt, sid, "Remember how to do this", ["allow", "allow"])
    assert [q.tool for q in asked(events)] == ["write_skill", "write_skill"]
    refused, saved = tool_events(events)
    assert not refused.success and "../escape.sh" in refused.result
    assert saved.success and "backup-photos" in saved.result
    assert not (tmp_path / "skills" / "local" / "escape.sh").exists()
    skill_md = tmp_path / "skills" / "local" / "backup-photos" / "SKILL.md"
    assert (
        parse_skill_md(skill_md.read_text(), file="x", folder_name="backup-photos")["name"] == "backup-photos"
    )
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall(
                    "run_skill_script",
                    {"skill": "backup-photos", "script": "scripts/backup.sh", "args": ["/photos"]},
                )
            ]
        ),
        "ok",
    )
    events = await run_answering(rt, sid, "back up my photos", ["allow"])
    system = script.of_kind("turn")[-1].messages[0].content or ""
    assert "- backup-photos: Copy the photos folder to the NAS." in system
    (ran,) = tool_events(events)
    assert ran.success and "backing up /photos" in ran.result
    await rt.aclose()


async def test_one_users_skills_are_not_anothers(tmp_path: Path) -> None:
    rt, script, sid = await runtime(tmp_path, "hi")
    rt.skills.write("alice", "alice-only", "Alice's private routine.", "Do it Alice's way.")
    session = await rt.sessions.create("default", owner="alice")
    script.turn(Reply(tool_calls=[ScriptedCall("use_skill", {"name": "csv-report"})]), "ok")
    await run_answering(rt, sid, "hello")
    events = await run_answering(rt, session.id, "hello")
    alice_system = script.of_kind("turn")[-1].messages[0].content or ""
    owner_system = script.of_kind("turn")[0].messages[0].content or ""
    assert "alice-only" in alice_system and "csv-report" not in alice_system
    assert "alice-only" not in owner_system
    (done,) = tool_events(events)
    assert not done.success  # the owner's SKILLS_DIRS skill does not exist for Alice
    await rt.aclose()


async def test_the_fixed_prompt_with_many_skills_stays_within_its_budget(tmp_path: Path) -> None:
    """The default profile's system message and schemas with 150 long skills installed: the listing
    never grows past `LISTING_BUDGET`, so the fixed prompt stays what a 4,096-token window holds
    with room for the conversation (docs/skills.md has the figures)."""
    from bench.prompt_tokens import count_chars
    from navi.agent.disclosure import disclose
    from tests.test_tool_prompt_budget import DEFAULT_PROFILE_BUDGET

    shared = tmp_path / "many"
    for i in range(150):
        write_skill(
            shared,
            f"skill-{i:03d}",
            f"---\nname: skill-{i:03d}\ndescription: {'Does a thing. ' * 60}\n---\nBody.\n",
        )
    rt, _backend, _script = await scripted_runtime(tmp_path, skills_dirs=str(shared))
    profile = rt.profiles.all()[0]
    system = rt.agent.model_view(profile, [])[0].content or ""
    specs = disclose(rt.agent.binder.tool_view(profile), profile.core_tools).specs([])
    total = count_chars(system, specs)["total"]
    tool_lines = 3 * 70  # use_skill, run_skill_script, write_skill: one listed line each
    assert total <= DEFAULT_PROFILE_BUDGET + tool_lines + LISTING_BUDGET
    assert total / 3.5 < 0.7 * 4096  # at 3.5 characters a token: under 70 % of a 4,096 window
    assert "- skill-000" in system and "more: use_skill with name 'list'" in system
    await rt.aclose()


async def test_sandboxed_programs_read_skills_but_never_change_them(tmp_path: Path) -> None:
    """A program the model runs (code_exec here) sees the skills folders read-only, so a skill's
    approved script cannot be changed behind the approval's back."""
    script_file = tmp_path / "collection" / "csv-report" / "scripts" / "summarise.py"
    own = tmp_path / "skills" / "local"
    code = (
        f"print(open({str(script_file)!r}).read()[:10])\n"
        "for path in ["
        f"{str(script_file)!r}, {str(own / 'new.txt')!r}]:\n"
        "    try:\n"
        "        open(path, 'a').write('x')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', type(exc).__name__)\n"
    )
    rt, script, sid = await runtime(
        tmp_path, Reply(tool_calls=[ScriptedCall("code_exec", {"code": code})]), "ok"
    )
    own.mkdir(parents=True, exist_ok=True)
    events = await run_answering(rt, sid, "try")
    (done,) = tool_events(events)
    assert done.success, done.result
    assert done.result.startswith("import csv")
    assert done.result.count("refused OSError") == 2 and "wrote" not in done.result
    assert not (own / "new.txt").exists() and script_file.read_text() == SUMMARISE_PY
    await rt.aclose()


def test_skills_dirs_may_name_a_checkout_whose_skills_are_deeper(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    collection(checkout / "skills")
    (checkout / "README.md").write_text("A collection.\n")
    (checkout / ".git").mkdir()
    report = SkillLibrary(tmp_path / "skills", [checkout], owner="local").load("local")
    assert sorted(s.name for s in report.skills) == ["csv-report", "house-style"]
    assert len(report.problems) == 1  # the broken one


async def test_a_restricted_file_system_shows_only_the_skill_whose_script_runs(tmp_path: Path) -> None:
    """With FS_ALLOWED_PATHS restricted, no program sees the skills folders (another user's skills
    among them); a skill's script sees its own skill's folder, read-only."""
    work = tmp_path / "work"
    work.mkdir()
    skills_root = tmp_path / "skills"
    probe = f"import os\nprint('skills visible:', os.path.exists({str(skills_root)!r}))\n"
    run = ScriptedCall(
        "run_skill_script", {"skill": "csv-report", "script": "scripts/summarise.py", "stdin": CSV}
    )
    rt, script, sid = await runtime(
        tmp_path,
        Reply(tool_calls=[ScriptedCall("code_exec", {"code": probe})]),
        Reply(tool_calls=[run]),
        "ok",
        fs_allowed_paths=str(work),
        skills_dirs="",
    )
    rt.skills.write(
        "local", "csv-report", "Summarise a CSV.", "Run it.", {"scripts/summarise.py": SUMMARISE_PY}
    )
    rt.skills.write("alice", "alice-only", "Alice's.", "Hers.")
    events = await run_answering(rt, sid, "go")
    probed, ran = tool_events(events)
    assert probed.success and "skills visible: False" in probed.result
    assert ran.success and "rows=2" in ran.result and "skill_dir_ok=True" in ran.result
    await rt.aclose()


async def test_the_model_replaces_its_own_skill_but_not_one_of_skills_dirs(tmp_path: Path) -> None:
    first = {"name": "notes", "description": "Take notes.", "instructions": "Version one."}
    second = {**first, "instructions": "Version two."}
    clash = {"name": "csv-report", "description": "Mine now.", "instructions": "Overwrite it."}
    rt, script, sid = await runtime(
        tmp_path,
        Reply(tool_calls=[ScriptedCall("write_skill", first)]),
        Reply(tool_calls=[ScriptedCall("write_skill", second)]),
        Reply(tool_calls=[ScriptedCall("write_skill", clash)]),
        "ok",
    )
    events = await run_answering(rt, sid, "remember these")
    results = tool_events(events)
    assert [r.success for r in results] == [True, True, False]
    assert "already installed" in results[2].result
    assert rt.skills.get("local", "notes").body == "Version two."
    assert rt.skills.get("local", "csv-report").source.endswith("collection")
    await rt.aclose()
