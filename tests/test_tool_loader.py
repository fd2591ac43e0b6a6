"""User tool loading: both formats, per-file error isolation, the source checker, hot reload.

Every file is loaded the way Navi loads it: checked here, imported and run in the tool host (a
sandboxed process), and registered as a proxy.
"""

from __future__ import annotations

import importlib.resources
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from navi import runctx
from navi.tools.base import Tool, ToolResult
from navi.tools.host.client import HostedTool, ToolHost
from navi.tools.host.imports import MODULE_PREFIX, as_result
from navi.tools.loader import LoadResult, check_tool_source
from navi.tools.registry import ToolRegistry
from tests.helpers.sandbox import make_sandbox


def module_tool(name: str, body: str = 'return "hello"', *, extra: str = "") -> str:
    """Source of a minimal module-level tool whose execute runs `body`; `extra` goes before it."""
    return "\n".join(
        [
            f'name = "{name}"',
            f'description = "A test tool called {name}."',
            "parameters = {",
            '    "type": "object",',
            '    "properties": {"text": {"type": "string", "description": "Some text."}},',
            "}",
            extra,
            "",
            "",
            "async def execute(params: dict) -> str:",
            textwrap.indent(textwrap.dedent(body), "    "),
            "",
        ]
    )


CLASS_TOOL = textwrap.dedent(
    """
    from typing import Any

    from navi.tools.base import Tool, ToolResult
    from navi.tools.builtin.todo import TodoTool  # imported, not defined here: must be ignored


    class Shout(Tool):
        name = "shout"
        description = "Upper-cases text."
        parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        timeout = 3.0

        async def execute(self, params: dict[str, Any]) -> ToolResult:
            return ToolResult.ok(params["text"].upper())
    """
)


class Builtin(Tool):
    name = "builtin_echo"
    description = "A built-in for the tests."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(params.get("text", ""))


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    path = tmp_path / "tools"
    path.mkdir()
    return path


@pytest.fixture
async def host() -> AsyncIterator[ToolHost]:
    # 3 s: a hang is still told apart, and a loaded machine took over 1 s to import a small file.
    tool_host = ToolHost(make_sandbox(), import_timeout=3.0)
    try:
        yield tool_host
    finally:
        await tool_host.aclose()


@pytest.fixture
def registry(host: ToolHost) -> ToolRegistry:
    return ToolRegistry(user_tools=host)


@pytest.fixture
def load(registry: ToolRegistry):
    """Load a folder as Navi does at start (no built-ins registered)."""

    async def load(folder: Path) -> LoadResult:
        return await registry.reload_user_tools(folder)

    return load


def write(directory: Path, filename: str, source: str) -> Path:
    path = directory / filename
    path.write_text(source, encoding="utf-8")
    return path


async def call(tool: Tool | None, params: dict[str, Any]) -> ToolResult:
    assert tool is not None
    with runctx.using(runctx.RunContext(session_id="s1")):
        return await tool.execute(params)


def only_error(result: LoadResult, file: str) -> str:
    errors = result.errors_for(file)
    assert len(errors) == 1, result.errors
    return errors[0].message


# --- formats --------------------------------------------------------------------------------------


async def test_module_level_tool_is_wrapped(tools_dir: Path, load) -> None:
    write(
        tools_dir,
        "greet.py",
        module_tool("greet", 'return "hi " + params.get("text", "")', extra="timeout = 7"),
    )
    result = await load(tools_dir)
    assert result.errors == []
    [tool] = result.loaded
    assert isinstance(tool, Tool)
    assert tool.name == "greet"
    assert tool.description == "A test tool called greet."
    assert tool.parameters["properties"]["text"]["type"] == "string"
    assert tool.timeout == 7.0
    assert tool.spec().name == "greet"
    out = await call(tool, {"text": "there"})
    assert out.success and out.output == "hi there"


async def test_module_level_execute_may_raise_or_return_a_tool_result(tools_dir: Path, load) -> None:
    write(tools_dir, "fails.py", module_tool("fails", 'raise ValueError("no such city")'))
    write(
        tools_dir,
        "rich.py",
        module_tool(
            "rich",
            'return ToolResult.ok("done", extra=1)',
            extra="from navi.tools.base import ToolResult",
        ),
    )
    result = await load(tools_dir)
    assert result.errors == []
    tools = {t.name: t for t in result.loaded}
    failed = await call(tools["fails"], {})
    assert not failed.success and failed.error == "ValueError: no such city"
    rich = await call(tools["rich"], {})
    assert rich.success and rich.output == "done" and rich.metadata == {"extra": 1}


async def test_non_string_returns_become_text(tools_dir: Path, load) -> None:
    assert as_result({"a": 1}).output == '{"a": 1}'
    assert as_result(42).output == "42"
    assert as_result(None).success
    write(tools_dir, "mapping.py", module_tool("mapping", 'return {"a": [1, 2]}'))
    [tool] = (await load(tools_dir)).loaded
    assert (await call(tool, {})).output == '{"a": [1, 2]}'


async def test_class_based_tool_loads(tools_dir: Path, load) -> None:
    write(tools_dir, "shouting.py", CLASS_TOOL)
    result = await load(tools_dir)
    assert result.errors == []
    assert result.names == ["shout"]
    assert result.loaded[0].timeout == 3.0
    assert (await call(result.loaded[0], {"text": "hey"})).output == "HEY"


async def test_underscore_files_and_other_files_are_ignored(tools_dir: Path, load) -> None:
    write(tools_dir, "_template.py", "this is not python (")
    write(tools_dir, "_helpers.py", module_tool("helpers"))
    write(tools_dir, "notes.txt", "text")
    write(tools_dir, "enabled.json", "[]")
    write(tools_dir, "good.py", module_tool("good"))
    result = await load(tools_dir)
    assert result.names == ["good"]
    assert result.errors == []


async def test_missing_directory_has_no_tools(tmp_path: Path, load, host: ToolHost) -> None:
    result = await load(tmp_path / "nowhere")
    assert result.loaded == [] and result.errors == []
    assert host.starts == 0, "no tool files, no tool host"


async def test_user_code_runs_in_the_tool_host_not_here(tools_dir: Path, load) -> None:
    write(tools_dir, "greet.py", module_tool("greet", "import os\nreturn f'{__name__} {os.getpid()}'"))
    [tool] = (await load(tools_dir)).loaded
    assert isinstance(tool, HostedTool)  # a proxy: the module itself lives in the host
    module, pid = (await call(tool, {})).output.split()
    assert module == f"{MODULE_PREFIX}.greet"  # namespaced there
    assert int(pid) != os.getpid()
    assert not [m for m in sys.modules if m.startswith(MODULE_PREFIX)], "never imported in the server"
    assert "__pycache__" not in os.listdir(tools_dir), "no bytecode cache is written into the tools folder"


# --- broken files ---------------------------------------------------------------------------------

BROKEN: list[tuple[str, str, str]] = [
    ("syntax.py", 'name = "syntax"\ndef broken(:\n    pass\n', "syntax error at line 2"),
    (
        "boom.py",
        module_tool("boom", extra='raise RuntimeError("exploded at import")'),
        "RuntimeError: exploded",
    ),
    ("exits.py", module_tool("exits", extra="import sys\nsys.exit(3)"), "SystemExit"),
    ("noexec.py", 'name = "noexec"\ndescription = "x"\nparameters = {"type": "object"}\n', "`execute`"),
    ("sync.py", module_tool("sync").replace("async def", "def"), "must be defined with `async def`"),
    (
        "badschema.py",
        module_tool("badschema").replace('"type": "string"', '"type": "strin"'),
        "not a valid JSON Schema",
    ),
    (
        "computed.py",
        module_tool("computed", extra='parameters = dict(type="object", required="text")'),
        "not a valid JSON Schema",
    ),
    (
        "notobject.py",
        module_tool("notobject").replace('"type": "object"', '"type": "array"'),
        "object schema",
    ),
    ("mismatch.py", module_tool("other_name"), "the name must equal the file name"),
    ("badname.py", module_tool("Bad-Name"), "not a valid tool name"),
    ("printer.py", module_tool("printer", extra='print("loading")'), "print() runs at import time (line"),
    (
        "twoargs.py",
        module_tool("twoargs").replace("execute(params: dict)", "execute(self, params: dict)"),
        "exactly one argument",
    ),
    ("empty.py", "", "missing top-level `name`, `description`, `parameters`, `execute`"),
    (
        "badclass.py",
        CLASS_TOOL.replace('name = "shout"', 'name = "Shout!"'),
        "Shout: `name` 'Shout!' is not a valid tool name",
    ),
    # Files that take the tool host down with them, or never finish importing.
    ("killer.py", module_tool("killer", extra="import os\nos._exit(7)"), "importing it ended the tool host"),
    (
        "hangs.py",
        module_tool("hangs", extra="while True:\n    pass"),
        "importing it did not finish within 3 s",
    ),
]


async def test_each_broken_file_is_reported_and_the_others_still_load(tools_dir: Path, load) -> None:
    write(tools_dir, "aaa_first.py", module_tool("aaa_first"))
    for filename, source, _ in BROKEN:
        write(tools_dir, filename, source)
    write(tools_dir, "zzz_last.py", module_tool("zzz_last"))
    result = await load(tools_dir)
    assert result.names == ["aaa_first", "zzz_last"]
    for filename, _, expected in BROKEN:
        assert expected in only_error(result, filename), filename
    assert "(exit code 7)" in only_error(result, "killer.py")
    for tool in result.loaded:  # the host that survived all of that answers
        assert (await call(tool, {})).output == "hello"
    assert not [m for m in sys.modules if m.startswith(MODULE_PREFIX)]


async def test_syntax_error_reports_line_and_column(tools_dir: Path, load) -> None:
    write(tools_dir, "syntax.py", 'name = "syntax"\n\nx = (1,\n')
    message = only_error(await load(tools_dir), "syntax.py")
    assert message.startswith("syntax error at line 3, column ")


async def test_import_error_names_the_line(tools_dir: Path, load) -> None:
    write(tools_dir, "boom.py", module_tool("boom", extra="value = 1 / 0"))
    message = only_error(await load(tools_dir), "boom.py")
    assert "ZeroDivisionError" in message
    assert "(line 7)" in message


async def test_a_missing_import_is_an_import_error(tools_dir: Path, load) -> None:
    write(tools_dir, "needs.py", module_tool("needs", extra="import surely_not_installed_package"))
    assert "ModuleNotFoundError" in only_error(await load(tools_dir), "needs.py")


async def test_duplicate_names_first_file_wins(tools_dir: Path, load) -> None:
    write(tools_dir, "shout.py", module_tool("shout", 'return "module"'))
    write(tools_dir, "zz_shouting.py", CLASS_TOOL)  # also called "shout"
    result = await load(tools_dir)
    assert result.names == ["shout"]
    assert "already used by shout.py" in only_error(result, "zz_shouting.py")
    assert (await call(result.loaded[0], {"text": "x"})).output == "module"


async def test_a_user_tool_cannot_take_a_builtin_name(tools_dir: Path, registry: ToolRegistry) -> None:
    builtin = Builtin()
    registry.register(builtin, builtin=True)
    write(tools_dir, "builtin_echo.py", module_tool("builtin_echo", 'return "impostor"'))
    write(tools_dir, "fine.py", module_tool("fine"))
    result = await registry.reload_user_tools(tools_dir)
    assert "name of a built-in tool" in only_error(result, "builtin_echo.py")
    assert registry.get("builtin_echo") is builtin
    assert registry.is_builtin("builtin_echo")
    assert sorted(registry.names()) == ["builtin_echo", "fine"]


# --- the source checker ---------------------------------------------------------------------------


def test_checker_accepts_a_good_module_and_runs_nothing() -> None:
    source = module_tool("fine", extra='open("should_not_exist.txt", "w")')
    assert check_tool_source(source, "fine") == []
    assert not Path("should_not_exist.txt").exists()


def test_checker_collects_several_problems() -> None:
    source = module_tool("wrong", extra='print("x")').replace("async def", "def")
    problems = check_tool_source(source, "right")
    assert len(problems) == 3
    assert any("print()" in p for p in problems)
    assert any("async def" in p for p in problems)
    assert any("must equal the file name" in p for p in problems)


def test_checker_wants_a_literal_name_and_a_complete_required_list() -> None:
    assert "plain string literal" in check_tool_source(module_tool("x").replace('"x"', '"x" + "y"'))[0]
    source = module_tool("fine").replace('"properties"', '"required": ["missing"], "properties"')
    assert "requires missing" in check_tool_source(source, "fine")[0]


def test_checker_can_insist_on_the_module_format() -> None:
    assert check_tool_source(CLASS_TOOL) == []
    problems = check_tool_source(CLASS_TOOL, "shout", module_format_only=True)
    assert problems and "missing top-level" in problems[0]


def test_prints_inside_functions_are_fine() -> None:
    source = module_tool("fine", 'print("debug")\nreturn "x"', extra="def helper():\n    print('x')")
    assert check_tool_source(source, "fine") == []


def test_prints_under_a_main_guard_are_fine() -> None:
    source = module_tool(
        "fine", extra='if __name__ == "__main__":\n    print("manual test")\nelse:\n    pass'
    )
    assert check_tool_source(source, "fine") == []
    source = module_tool("fine", extra='if __name__ == "__main__":\n    pass\nelse:\n    print("x")')
    assert "print()" in check_tool_source(source, "fine")[0]


async def test_timeout_is_optional_and_checked(tools_dir: Path, load) -> None:
    write(
        tools_dir, "imports_timeout.py", module_tool("imports_timeout", extra="from asyncio import timeout")
    )
    write(tools_dir, "negative.py", module_tool("negative", extra="timeout = -1"))
    write(tools_dir, "text.py", module_tool("text", extra='timeout = "30"'))
    result = await load(tools_dir)
    assert result.names == ["imports_timeout"]
    assert result.loaded[0].timeout == Tool.timeout
    assert "positive number" in only_error(result, "negative.py")
    assert "positive number" in only_error(result, "text.py")


async def test_hidden_files_are_ignored(tools_dir: Path, load) -> None:
    write(tools_dir, ".scratch.py", "broken (")
    assert (await load(tools_dir)).errors == []


def test_the_shipped_template_is_a_valid_tool() -> None:
    template = importlib.resources.files("navi.tools").joinpath("seed", "_template.py").read_text("utf-8")
    assert check_tool_source(template, "my_tool", module_format_only=True) == []


# --- hot reload -----------------------------------------------------------------------------------


async def test_reload_picks_up_edits_and_drops_deleted_files(tools_dir: Path, registry: ToolRegistry) -> None:
    path = write(tools_dir, "version.py", module_tool("version", 'return "v1"'))
    write(tools_dir, "doomed.py", module_tool("doomed"))
    first = await registry.reload_user_tools(tools_dir)
    assert sorted(first.names) == ["doomed", "version"]
    assert (await call(registry.get("version"), {})).output == "v1"

    # Same length, same second: a bytecode cache keyed on mtime and size would serve the old code.
    path.write_text(module_tool("version", 'return "v2"'), encoding="utf-8")
    (tools_dir / "doomed.py").unlink()
    second = await registry.reload_user_tools(tools_dir)
    assert second.names == ["version"]
    assert registry.get("doomed") is None
    assert (await call(registry.get("version"), {})).output == "v2"


async def test_builtins_survive_reload_and_broken_edits(tools_dir: Path, registry: ToolRegistry) -> None:
    builtin = Builtin()
    registry.register(builtin, builtin=True)
    path = write(tools_dir, "user_one.py", module_tool("user_one"))
    await registry.reload_user_tools(tools_dir)
    assert set(registry.names()) == {"builtin_echo", "user_one"}

    path.write_text("def broken(:\n", encoding="utf-8")
    result = await registry.reload_user_tools(tools_dir)
    assert registry.names() == ["builtin_echo"]
    assert registry.get("builtin_echo") is builtin
    assert result.errors_for("user_one.py")

    path.unlink()
    await registry.reload_user_tools(tools_dir)
    assert registry.names() == ["builtin_echo"]
    assert registry.builtin_names == {"builtin_echo"}


async def test_reload_gives_fresh_module_state(tools_dir: Path, registry: ToolRegistry) -> None:
    source = module_tool("counter", "global COUNT\nCOUNT += 1\nreturn str(COUNT)", extra="COUNT = 0")
    write(tools_dir, "counter.py", source)
    await registry.reload_user_tools(tools_dir)
    assert (await call(registry.get("counter"), {})).output == "1"
    assert (await call(registry.get("counter"), {})).output == "2"
    await registry.reload_user_tools(tools_dir)
    assert (await call(registry.get("counter"), {})).output == "1"


async def test_reloaded_tools_are_validated_against_their_new_schema(
    tools_dir: Path, registry: ToolRegistry
) -> None:
    path = write(tools_dir, "typed.py", module_tool("typed"))
    await registry.reload_user_tools(tools_dir)
    tool = registry.get("typed")
    assert tool is not None and registry.validation_error(tool, {"text": 5}) is not None
    path.write_text(module_tool("typed").replace('"type": "string"', '"type": "integer"'), encoding="utf-8")
    await registry.reload_user_tools(tools_dir)
    tool = registry.get("typed")
    assert tool is not None and registry.validation_error(tool, {"text": 5}) is None
