"""The fixed prompt stays small, and shrinking it never cost a tool, a parameter or a constraint.

Every model call carries the system prompt and every tool schema; a CPU model reads them cold before
its first token, so their size is latency. The budget is in characters (deterministic, unlike tokens,
which depend on the model's tokenizer and template; `bench/prompt_tokens.py` reports both). The
schemas are compared with `tests/data/tool_schemas.json`, taken before the descriptions were
rewritten: names, types, required lists, enums and every validation keyword must stay as they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.prompt_tokens import count_chars, fixed_prompt, fixed_prompts
from navi.agent.disclosure import INDEX_HEADING, LOAD_TOOLS
from navi.profiles.base import BASE_TOOLS
from navi.sessions.state import SessionState
from navi.tools.base import model_schema
from navi.tools.builtin.todo import TodoTool
from navi.tools.registry import ToolRegistry

# The default profile's system prompt plus all its tools as JSON: 18,006 before the rewrite (5,009
# SmolLM2 tokens through navi/testing/templates/chatml-tools.jinja), 13,409 after it (3,908 tokens),
# 11,851 once the model no longer reads validation-only limits (3,390 tokens), 12,538 with `schedule`
# (3,603 tokens); 7,889 (2,245 tokens) with progressive disclosure (the likely tools' schemas, the
# rest listed one line each); 8,349 once the persona said all the reference's persona says; 8,457
# with `search_documents` listed, 8,556 with `browser` listed, 8,749 with `notify` and `background_job`
# (the browser's line cut by four characters). The
# budget is the target, half of 5,009 tokens, in characters (3.5 a token): room for a few more
# listed tools, not for another full schema.
DEFAULT_PROFILE_BUDGET = 8_750

BEFORE = json.loads((Path(__file__).parent / "data" / "tool_schemas.json").read_text(encoding="utf-8"))


def without_descriptions(schema: Any) -> Any:
    """`schema` with every `description` text removed: what validation and the model's types rest on."""
    if isinstance(schema, dict):
        return {
            k: without_descriptions(v)
            for k, v in schema.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


@pytest.fixture
def prompts() -> dict[str, Any]:
    """Built per test, after `isolated_env` has cleared Navi's variables (a module fixture would not be).
    Every tool with its schema: what the schema checks read."""
    return fixed_prompts(disclosure=False)


def test_default_profile_prompt_is_within_budget() -> None:
    system_text, specs = fixed_prompt()
    chars = count_chars(system_text, specs)
    assert chars["total"] <= DEFAULT_PROFILE_BUDGET, (
        f"the default profile's fixed prompt grew to {chars['total']} characters "
        f"(budget {DEFAULT_PROFILE_BUDGET}): system {chars['system']}, tools {chars['tools']}"
    )
    assert chars["total"] == chars["system"] + sum(chars["tools"].values())
    assert system_text.startswith("You are Navi") and "Mode: personal secretary" in system_text


def test_every_profile_offers_the_same_tools_as_before(prompts: dict[str, Any]) -> None:
    assert list(prompts) == list(BEFORE["profiles"])
    for profile_id, (_system, specs) in prompts.items():
        assert [s.name for s in specs] == BEFORE["profiles"][profile_id], profile_id
        assert set(BASE_TOOLS) <= {s.name for s in specs}


def test_disclosure_keeps_every_tool_reachable() -> None:
    """Each tool of each profile is sent with its schema or listed by name, with `load_tools` to
    load it: none is lost to the smaller prompt."""
    for profile_id, (system, specs) in fixed_prompts().items():
        names = [s.name for s in specs]
        listed = [
            line[2:].split(":", 1)[0]
            for line in system.split(INDEX_HEADING, 1)[1].splitlines()
            if line[:2] == "- "
        ]
        assert LOAD_TOOLS in names, profile_id
        assert sorted([*names, *listed]) == sorted([*BEFORE["profiles"][profile_id], LOAD_TOOLS]), profile_id
        assert not set(names) & set(listed), profile_id
        assert len(names) < len(listed), profile_id  # most tools are listed, not sent whole


def test_parameters_are_unchanged(prompts: dict[str, Any]) -> None:
    offered = {s.name: s for _system, specs in prompts.values() for s in specs}
    assert set(offered) == set(BEFORE["schemas"])
    for name, spec in offered.items():
        # The model reads the schema without validation-only limits; validation keeps them all.
        assert without_descriptions(spec.parameters) == model_schema(BEFORE["schemas"][name]), name


def test_every_tool_says_what_it_does(prompts: dict[str, Any]) -> None:
    """A shorter description is still a sentence, and never repeats itself in a parameter."""
    for _system, specs in prompts.values():
        for spec in specs:
            assert len(spec.description) >= 40 and spec.description.rstrip().endswith("."), spec.name
            for pname, pschema in spec.parameters.get("properties", {}).items():
                text = pschema.get("description", "")
                assert not text or text not in spec.description, (
                    f"{spec.name}.{pname} repeats the description"
                )


def test_the_before_schemas_would_catch_a_changed_parameter(prompts: dict[str, Any]) -> None:
    """The comparison is strict: a dropped constraint or a renamed parameter is a difference."""
    todo = next(s for s in prompts["secretary"][1] if s.name == "todo")
    loosened = without_descriptions(todo.parameters)
    loosened["properties"]["tasks"].pop("items")
    assert loosened != model_schema(BEFORE["schemas"]["todo"])
    renamed = without_descriptions(todo.parameters)
    renamed["properties"]["step"] = renamed["properties"].pop("index")
    assert renamed != model_schema(BEFORE["schemas"]["todo"])


def test_validation_keeps_the_limits_the_model_is_not_shown() -> None:
    registry = ToolRegistry()
    registry.register(TodoTool(SessionState()))
    todo = registry.get("todo")
    assert todo is not None
    assert "maxItems" not in json.dumps(todo.spec().parameters)
    assert without_descriptions(todo.parameters) == BEFORE["schemas"]["todo"]  # unchanged for validation
    too_many = {"action": "set", "tasks": [f"task {i}" for i in range(500)]}
    assert registry.validation_error(todo, too_many) is not None
    assert registry.validation_error(todo, {"action": "set", "tasks": ["one"]}) is None
    assert registry.validation_error(todo, {"action": "read", "surprise": 1}) is not None  # no extras


def test_model_schema_keeps_property_names_that_look_like_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "minLength": 1}, "maximum": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert model_schema(schema) == {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "maximum": {"type": "integer"}},
    }
