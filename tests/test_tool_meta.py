"""Meta tools (reload, write, list, manual), enabled.json, the seed tools and first-run seeding."""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from navi import runctx
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.meta import (
    ListToolsTool,
    ReloadToolsTool,
    ToolManualTool,
    WriteToolTool,
    generated_manual,
)
from navi.tools.host.client import ToolHost
from navi.tools.registry import ToolRegistry
from navi.tools.seeding import ensure_tools_dir, seed_files
from navi.tools.user_config import (
    EnabledTools,
    add_enabled,
    read_enabled,
    remove_enabled,
    write_enabled,
)
from tests.helpers.sandbox import make_sandbox


class Builtin(Tool):
    name = "builtin_echo"
    description = "Echo text back. Second sentence that list_tools leaves out."
    parameters = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "What to echo.", "maxLength": 50},
            "mode": {"type": "string", "enum": ["plain", "loud"], "default": "plain"},
            "count": {"type": "integer", "minimum": 1},
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    timeout = 9.0

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(params["text"])


GOOD_CODE = '''"""Adds two numbers."""

name = "add_numbers"
description = "Add two numbers `a` and `b` and return the sum."
parameters = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


async def execute(params: dict) -> str:
    return f"{params['a'] + params['b']:g}"
'''


class Env:
    def __init__(self, root: Path) -> None:
        self.tools_dir = root / "tools"
        self.manuals_dir = root / "manuals"
        self.host = ToolHost(make_sandbox())  # user tools run there, never in this process
        self.registry = ToolRegistry(user_tools=self.host)
        self.registry.register(Builtin(), builtin=True)
        self.registry.register(ReloadToolsTool(self.registry, self.tools_dir), builtin=True)
        self.registry.register(WriteToolTool(self.registry, self.tools_dir), builtin=True)
        self.registry.register(ListToolsTool(self.registry), builtin=True)
        self.registry.register(ToolManualTool(self.registry, self.manuals_dir), builtin=True)

    async def run(self, tool_name: str, /, **params: Any) -> ToolResult:
        tool = self.registry.get(tool_name)
        assert tool is not None, f"no tool {tool_name}"
        assert self.registry.validation_error(tool, params) is None
        with runctx.using(runctx.RunContext(session_id="s1")):
            return await tool.execute(params)


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    environment = Env(tmp_path)
    try:
        yield environment
    finally:
        await environment.host.aclose()


def manual_example() -> str:
    manual = importlib.resources.files("navi.tools").joinpath("manuals", "write_tool.md").read_text("utf-8")
    match = re.search(r"```python\n(.*?)```", manual, re.S)
    assert match is not None
    return match.group(1)


# --- write_tool -----------------------------------------------------------------------------------


async def test_write_tool_round_trip(env: Env) -> None:
    result = await env.run("write_tool", name="add_numbers", code=GOOD_CODE)
    assert result.success, result.error
    assert "Created" in result.output and "next user message" in result.output
    path = env.tools_dir / "add_numbers.py"
    assert path.read_text(encoding="utf-8") == GOOD_CODE
    assert read_enabled(env.tools_dir) == ["add_numbers"]
    assert not env.registry.is_builtin("add_numbers")
    assert (await env.run("add_numbers", a=2, b=3.5)).output == "5.5"


async def test_write_tool_updates_an_existing_tool(env: Env) -> None:
    await env.run("write_tool", name="add_numbers", code=GOOD_CODE)
    changed = GOOD_CODE.replace("params['a'] + params['b']", "params['a'] - params['b']")
    result = await env.run("write_tool", name="add_numbers", code=changed)
    assert result.success and "Updated" in result.output
    assert read_enabled(env.tools_dir) == ["add_numbers"]
    assert (await env.run("add_numbers", a=2, b=3)).output == "-1"


async def test_the_manual_example_is_a_working_tool(env: Env) -> None:
    result = await env.run("write_tool", name="convert_units", code=manual_example())
    assert result.success, result.error
    assert (
        await env.run("convert_units", value=5, from_unit="km", to_unit="mi")
    ).output == "5 km = 3.10686 mi"
    assert (await env.run("convert_units", value=100, from_unit="C", to_unit="F")).output == "100 C = 212 F"
    failed = await env.run("convert_units", value=1, from_unit="kg", to_unit="m")
    assert not failed.success and "cannot convert" in (failed.error or "")


@pytest.mark.parametrize(
    ("name", "code", "reason"),
    [
        ("add_numbers", "def broken(:\n", "syntax error at line 1"),
        ("add_numbers", GOOD_CODE.replace("async def", "def"), "async def"),
        ("other_name", GOOD_CODE, "must equal the file name"),
        ("add_numbers", GOOD_CODE.replace('"number"}, "b"', '"numbr"}, "b"'), "not a valid JSON Schema"),
        ("add_numbers", GOOD_CODE + 'print("hi")\n', "print()"),
        (
            "add_numbers",
            GOOD_CODE.replace("async def execute", "async def run"),
            "missing top-level `execute`",
        ),
    ],
    ids=["syntax", "sync", "name-mismatch", "bad-schema", "print", "no-execute"],
)
async def test_write_tool_refuses_bad_code_with_the_reason(
    env: Env, name: str, code: str, reason: str
) -> None:
    result = await env.run("write_tool", name=name, code=code)
    assert not result.success
    assert "not saved" in (result.error or "")
    assert reason in (result.error or "")
    assert not (env.tools_dir / f"{name}.py").exists()
    assert read_enabled(env.tools_dir) == []
    assert env.registry.get(name) is None


async def test_write_tool_refuses_class_based_code(env: Env) -> None:
    code = (
        "from navi.tools.base import Tool, ToolResult\n\n\nclass AddNumbers(Tool):\n"
        '    name = "add_numbers"\n    description = "x"\n\n'
        "    async def execute(self, params):\n        return ToolResult.ok('')\n"
    )
    result = await env.run("write_tool", name="add_numbers", code=code)
    assert not result.success and "missing top-level" in (result.error or "")


async def test_write_tool_refuses_builtin_names(env: Env) -> None:
    result = await env.run(
        "write_tool", name="builtin_echo", code=GOOD_CODE.replace("add_numbers", "builtin_echo")
    )
    assert not result.success and "built-in" in (result.error or "")
    assert not (env.tools_dir / "builtin_echo.py").exists()


async def test_write_tool_reports_a_failure_to_load_after_writing(env: Env) -> None:
    code = GOOD_CODE.replace('"""Adds two numbers."""', 'raise RuntimeError("no config")')
    result = await env.run("write_tool", name="add_numbers", code=code)
    assert not result.success
    assert "failed to load" in (result.error or "")
    assert "RuntimeError: no config" in (result.error or "")
    assert (env.tools_dir / "add_numbers.py").exists()
    assert env.registry.get("add_numbers") is None
    # Fixing it with a second call works.
    assert (await env.run("write_tool", name="add_numbers", code=GOOD_CODE)).success
    assert env.registry.get("add_numbers") is not None


async def test_write_tool_mentions_other_broken_files(env: Env) -> None:
    env.tools_dir.mkdir()
    (env.tools_dir / "broken.py").write_text("x = (\n", encoding="utf-8")
    result = await env.run("write_tool", name="add_numbers", code=GOOD_CODE)
    assert result.success
    assert "broken.py: syntax error" in result.output


# --- reload_tools and list_tools ------------------------------------------------------------------


async def test_reload_tools_lists_loaded_tools_and_errors(env: Env) -> None:
    env.tools_dir.mkdir()
    (env.tools_dir / "add_numbers.py").write_text(GOOD_CODE, encoding="utf-8")
    (env.tools_dir / "broken.py").write_text("x = (\n", encoding="utf-8")
    result = await env.run("reload_tools")
    assert result.success
    assert "Loaded 1 user tool(s): add_numbers." in result.output
    assert "- broken.py: syntax error at line 1" in result.output
    assert result.metadata["loaded"] == ["add_numbers"]
    assert result.metadata["errors"][0]["file"] == "broken.py"
    assert env.registry.get("reload_tools") is not None

    (env.tools_dir / "add_numbers.py").unlink()
    result = await env.run("reload_tools")
    assert "Loaded 0 user tool(s): none." in result.output
    assert env.registry.get("add_numbers") is None


async def test_list_tools_shows_builtin_and_user_tools(env: Env) -> None:
    await env.run("write_tool", name="add_numbers", code=GOOD_CODE)
    result = await env.run("list_tools")
    assert result.success
    lines = result.output.splitlines()
    assert lines[0] == "6 tools (5 built-in, 1 user):"
    assert "- builtin_echo (built-in): Echo text back." in lines
    assert "- add_numbers (user): Add two numbers `a` and `b` and return the sum." in lines
    assert lines[-1].startswith("- add_numbers (user)")
    assert result.metadata["user"] == ["add_numbers"]


# --- tool_manual ----------------------------------------------------------------------------------


async def test_generated_manual_describes_the_parameters(env: Env) -> None:
    result = await env.run("tool_manual", name="builtin_echo")
    assert result.success and result.metadata["source"] == "generated"
    text = result.output
    assert text.startswith("# builtin_echo (built-in tool)")
    assert "Echo text back." in text
    assert "- `text` (string, required): What to echo. [at most 50 characters]" in text
    assert "- `mode` (string, optional) [one of 'plain', 'loud'; default 'plain']" in text
    assert "- `count` (integer, optional) [at least 1]" in text
    assert "No other parameters are accepted." in text
    assert "Times out after 9 s." in text


def test_generated_manual_for_a_tool_without_parameters(env: Env) -> None:
    tool = env.registry.get("list_tools")
    assert tool is not None
    assert "None: call it with an empty object {}." in generated_manual(tool, builtin=True)


async def test_manual_sources_override_in_order(env: Env) -> None:
    shipped = await env.run("tool_manual", name="write_tool")
    assert shipped.metadata["source"] == "package"
    assert shipped.output.startswith("# write_tool")

    env.manuals_dir.mkdir()
    (env.manuals_dir / "write_tool.md").write_text("# My own write_tool notes\n", encoding="utf-8")
    (env.manuals_dir / "builtin_echo.md").write_text("# Echo, explained by hand\n", encoding="utf-8")
    user = await env.run("tool_manual", name="write_tool")
    assert user.metadata["source"] == "user" and user.output == "# My own write_tool notes\n"
    echo = await env.run("tool_manual", name="builtin_echo")
    assert echo.metadata["source"] == "user" and echo.output.startswith("# Echo, explained by hand")


async def test_manual_for_a_user_tool_is_generated(env: Env) -> None:
    await env.run("write_tool", name="add_numbers", code=GOOD_CODE)
    result = await env.run("tool_manual", name="add_numbers")
    assert result.output.startswith("# add_numbers (user tool)")
    assert "- `a` (number, required)" in result.output


async def test_manual_for_an_unknown_tool_lists_the_tools(env: Env) -> None:
    result = await env.run("tool_manual", name="nonexistent")
    assert not result.success
    assert "no tool named 'nonexistent'" in (result.error or "")
    assert "builtin_echo" in (result.error or "") and "write_tool" in (result.error or "")


@pytest.mark.parametrize("name", ["../secrets", "a/b", "a\\b", ".hidden", "..", "bad name"])
async def test_manual_refuses_paths(env: Env, tmp_path: Path, name: str) -> None:
    (tmp_path / "secrets.md").write_text("secret", encoding="utf-8")
    result = await env.run("tool_manual", name=name)
    assert not result.success
    assert "secret" not in result.output


# --- enabled.json ---------------------------------------------------------------------------------


def test_enabled_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_enabled(tmp_path / "tools") == []


def test_enabled_invalid_json_is_empty_and_logged(tmp_path: Path) -> None:
    (tmp_path / "enabled.json").write_text("[not json", encoding="utf-8")
    with capture_logs() as logs:
        assert read_enabled(tmp_path) == []
    assert [e["event"] for e in logs] == ["enabled_tools_invalid_json"]
    assert logs[0]["log_level"] == "warning"


def test_enabled_wrong_shapes_are_tolerated(tmp_path: Path) -> None:
    (tmp_path / "enabled.json").write_text('{"tools": ["a"]}', encoding="utf-8")
    with capture_logs():
        assert read_enabled(tmp_path) == []
    (tmp_path / "enabled.json").write_text('["a", 3, "b", "a", ""]', encoding="utf-8")
    with capture_logs():
        assert read_enabled(tmp_path) == ["a", "b"]


def test_enabled_updates_are_atomic_and_deduplicated(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    assert add_enabled(tools, "one") is True
    assert add_enabled(tools, "one") is False
    assert add_enabled(tools, "two") is True
    assert json.loads((tools / "enabled.json").read_text(encoding="utf-8")) == ["one", "two"]
    assert remove_enabled(tools, "one") is True
    assert remove_enabled(tools, "one") is False
    assert read_enabled(tools) == ["two"]
    assert write_enabled(tools, ["b", "a", "b"]) == ["b", "a"]
    assert sorted(p.name for p in tools.iterdir()) == ["enabled.json"], "no temporary files left behind"


def test_enabled_reader_for_the_agent_follows_the_file(tmp_path: Path) -> None:
    reader = EnabledTools(tmp_path)
    assert reader() == []
    write_enabled(tmp_path, ["x"])
    assert reader() == ["x"]
    write_enabled(tmp_path, ["x", "y"])
    assert reader() == ["x", "y"]
    (tmp_path / "enabled.json").write_text("oops", encoding="utf-8")
    with capture_logs() as logs:
        assert reader() == []
        assert reader() == []
    assert len(logs) == 1, "a broken file is logged once, not on every message"


# --- seeding and the seed tools -------------------------------------------------------------------


def test_ensure_tools_dir_seeds_once_and_never_overwrites(tmp_path: Path) -> None:
    tools = tmp_path / "data" / "tools"
    assert ensure_tools_dir(tools) is True
    names = sorted(p.name for p in tools.iterdir())
    assert names == ["_template.py", "enabled.json", "get_current_datetime.py", "user_notes.py"]
    assert names == [f.name for f in seed_files()]
    assert read_enabled(tools) == ["get_current_datetime", "user_notes"]

    (tools / "user_notes.py").write_text("# my edits\n", encoding="utf-8")
    (tools / "get_current_datetime.py").unlink()
    assert ensure_tools_dir(tools) is False
    assert (tools / "user_notes.py").read_text(encoding="utf-8") == "# my edits\n"
    assert not (tools / "get_current_datetime.py").exists()


def test_ensure_tools_dir_leaves_an_existing_folder_alone(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    assert ensure_tools_dir(tools) is False
    assert list(tools.iterdir()) == []


@pytest.fixture
async def seeded(env: Env) -> Env:
    assert ensure_tools_dir(env.tools_dir)
    result = await env.registry.reload_user_tools(env.tools_dir)
    assert result.errors == []
    assert sorted(result.names) == ["get_current_datetime", "user_notes"]
    return env


async def test_datetime_tool_with_a_timezone(seeded: Env) -> None:
    tokyo = await seeded.run("get_current_datetime", timezone="Asia/Tokyo")
    assert tokyo.success
    assert "(UTC+09:00)" in tokyo.output
    assert re.search(r"ISO 8601: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00", tokyo.output)
    assert "Time zone: Asia/Tokyo" in tokyo.output
    utc = await seeded.run("get_current_datetime", timezone="UTC")
    assert "+00:00" in utc.output
    local = await seeded.run("get_current_datetime")
    assert local.success and "server local time" in local.output


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "../../etc/passwd", "Not a zone"])
async def test_datetime_tool_rejects_unknown_zones(seeded: Env, zone: str) -> None:
    result = await seeded.run("get_current_datetime", timezone=zone)
    assert not result.success
    assert "unknown time zone" in (result.error or "") and "IANA" in (result.error or "")


async def test_user_notes_add_list_search_delete(seeded: Env) -> None:
    assert (await seeded.run("user_notes", action="list")).output == "There are no notes yet."
    assert (await seeded.run("user_notes", action="add", text="Prefers green tea")).output == "Saved note #1."
    assert (
        await seeded.run("user_notes", action="add", text="Dentist on Friday at 10")
    ).output == "Saved note #2."
    listed = (await seeded.run("user_notes", action="list")).output
    assert listed.startswith("2 note(s):")
    assert "#1 (" in listed and "Prefers green tea" in listed

    found = (await seeded.run("user_notes", action="search", query="GREEN prefers")).output
    assert "1 matching note(s)" in found and "#1" in found and "#2" not in found
    assert (
        "No notes contain" in (await seeded.run("user_notes", action="search", query="green friday")).output
    )

    assert (await seeded.run("user_notes", action="delete", id=1)).output == "Deleted note #1."
    missing = await seeded.run("user_notes", action="delete", id=1)
    assert not missing.success and "no note #1" in (missing.error or "")
    assert (await seeded.run("user_notes", action="add", text="Third")).output == "Saved note #3."

    stored = json.loads((seeded.tools_dir / "user_notes.json").read_text(encoding="utf-8"))
    assert [n["id"] for n in stored["notes"]] == [2, 3]
    assert set(stored["notes"][0]) == {"id", "text", "created_at"}


async def test_user_notes_survive_a_reload(seeded: Env) -> None:
    before = seeded.registry.get("user_notes")
    await seeded.run("user_notes", action="add", text="Cat is called Miso")
    await seeded.registry.reload_user_tools(seeded.tools_dir)
    assert seeded.registry.get("user_notes") is not before
    listed = (await seeded.run("user_notes", action="list")).output
    assert "Cat is called Miso" in listed


async def test_user_notes_refuse_to_overwrite_a_damaged_file(seeded: Env) -> None:
    notes_file = seeded.tools_dir / "user_notes.json"
    notes_file.write_text("{broken", encoding="utf-8")
    result = await seeded.run("user_notes", action="add", text="x")
    assert not result.success and "damaged" in (result.error or "")
    assert notes_file.read_text(encoding="utf-8") == "{broken"


async def test_user_notes_need_their_arguments(seeded: Env) -> None:
    result = await seeded.run("user_notes", action="add")
    assert not result.success and "`add` needs `text`" in (result.error or "")
