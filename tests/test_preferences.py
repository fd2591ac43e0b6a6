"""Custom instructions, a conversation's own model and instructions, and profiles made over REST
(issue 49, items 13 and 14): what the model is sent (the system message, the model asked), the
stable prefix kept from call to call, the served model named on the answer and in stream_end,
another user's view (404, nothing listed), bad input refused; both stores keep them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.profiles.custom import (
    ABOUT_HEADING,
    ANSWER_HEADING,
    CustomProfile,
    InMemoryPreferenceStore,
    Instructions,
    PreferenceStore,
    ProfileSpec,
)
from navi.profiles.persona import SESSION_HEADING
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.migrate import upgrade
from navi.storage.preferences import SqlPreferenceStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from tests.server_helpers import live_navi, use_script
from tests.test_user_signins import add_user, bearer

BIG = "gemma4:26b-a4b-it-q4_K_M"  # a model the fake server lists besides the default


def turn_request(fake: FakeModelServer) -> ScriptRequest:
    """The latest call of a turn (not naming's)."""
    return [r for r in fake.requests if "a short title" not in (r.messages[0].content or "")][-1]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[PreferenceStore]:
    if request.param == "memory":
        yield InMemoryPreferenceStore()
        return
    if request.param == "postgres":
        url = postgres_url(request.getfixturevalue("pg_url"))
    else:
        url = sqlite_url(tmp_path / "navi.db")
    db = Database(url)
    await upgrade(db)
    try:
        yield SqlPreferenceStore(db)
    finally:
        await db.dispose()


async def test_the_stores_keep_instructions_and_profiles_per_user(store: PreferenceStore) -> None:
    assert await store.instructions("ana") == Instructions()
    await store.set_instructions("ana", Instructions(about_me="I live in Porto.", how_to_answer="Briefly."))
    assert (await store.instructions("ana")).about_me == "I live in Porto."
    assert await store.instructions("bob") == Instructions()
    made = CustomProfile(id="custom-1", owner="ana", spec=ProfileSpec(name="Cook", tools=["todo"]))
    await store.put_profile(made)
    await store.put_profile(
        made.model_copy(update={"spec": ProfileSpec(name="Chef", model="ollama:plain:1b")})
    )
    assert [(p.id, p.owner, p.spec.name, p.spec.model) for p in await store.profiles()] == [
        ("custom-1", "ana", "Chef", "ollama:plain:1b")
    ]
    assert not await store.delete_profile("custom-1", "bob")  # not bob's
    assert await store.delete_profile("custom-1", "ana")
    assert await store.profiles() == []


def test_instructions_models_and_profiles_reach_the_model(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Zero.", served_model="gemma4:26b-a4b-it-q4_K_M"))
    script.turn("One.")
    script.turn("Two.")
    script.turn("Three.")
    script.turn("Four.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi, navi.client() as http:
        # The model that answered, as its server named it: on the answer (the page's header names it).
        served = navi.new_session()
        assert http.post(f"/sessions/{served}/messages", json={"content": "Who answers?"}).status_code == 200
        assert turn_request(fake_server).model == "gemma4:e2b-it-q8_0"  # asked: the default
        answer = http.get(f"/sessions/{served}").json()["messages"][-1]
        assert answer["metadata"]["model"] == "gemma4:26b-a4b-it-q4_K_M"

        # The models to pick from: what the server lists, as "backend:model" (GET /models' `choices`).
        choices = {c["id"]: c for c in http.get("/models", params={"check": "false"}).json()["choices"]}
        assert {"ollama:plain:1b", "ollama:gemma4:e2b-it-q8_0"} <= set(choices)
        assert choices["ollama:plain:1b"] == {
            "id": "ollama:plain:1b",
            "backend": "ollama",
            "model": "plain:1b",
            "listed": True,
        }

        # Custom instructions: in the system message after the profile's prompt, the same on every call.
        mine = {
            "about_me": "I live in Porto and cook for four.",
            "how_to_answer": "Short answers, metric units.",
        }
        assert http.put("/agents/instructions", json=mine).json() == mine
        assert http.get("/agents/instructions").json() == mine
        sid = navi.new_session()
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Hi"}).status_code == 200
        first = turn_request(fake_server).messages[0].content or ""
        assert f"{ABOUT_HEADING}\n\nI live in Porto and cook for four." in first
        assert f"{ANSWER_HEADING}\n\nShort answers, metric units." in first
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Again"}).status_code == 200
        assert turn_request(fake_server).messages[0].content == first  # the cached prefix kept

        # The conversation's own model and instructions.
        changed = http.patch(
            f"/sessions/{sid}", json={"model": "ollama:plain:1b", "system_prompt": "Answer in French."}
        )
        assert changed.status_code == 200, changed.text
        detail = http.get(f"/sessions/{sid}").json()
        assert (detail["model"], detail["system_prompt"]) == ("ollama:plain:1b", "Answer in French.")
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Third"}).status_code == 200
        asked = turn_request(fake_server)
        assert asked.model == "plain:1b"
        system = asked.messages[0].content or ""
        assert "I live in Porto" in system and f"{SESSION_HEADING}\n\nAnswer in French." in system
        answer = http.get(f"/sessions/{sid}").json()["messages"][-1]
        assert answer["metadata"]["model"] == "plain:1b"  # the header names it
        assert http.patch(f"/sessions/{sid}", json={"model": "", "system_prompt": ""}).status_code == 200
        assert http.get(f"/sessions/{sid}").json()["model"] is None
        for bad in ({"model": "plain:1b"}, {"model": "nowhere:x"}, {"model": "ollama:"}):
            refused = http.patch(f"/sessions/{sid}", json=bad)
            assert refused.status_code == 422 and "backend:model" in refused.json()["detail"], bad

        # A profile made over REST: its instructions, tools and model reach the model.
        spec = {
            "name": "Cook",
            "instructions": "You are a cook.",
            "tools": ["todo"],
            "model": "ollama:gemma4:26b-a4b-it-q4_K_M",
        }
        made = http.post("/agents/profiles", json=spec)
        assert made.status_code == 201, made.text
        cook = made.json()
        assert (cook["custom"], cook["instructions"], cook["model"], cook["tools"]) == (
            True,
            "You are a cook.",
            "gemma4:26b-a4b-it-q4_K_M",
            ["todo"],
        )
        assert cook["id"] in [p["id"] for p in http.get("/agents/profiles").json()]
        kitchen = navi.new_session(cook["id"])
        assert http.post(f"/sessions/{kitchen}/messages", json={"content": "Soup?"}).status_code == 200
        asked = turn_request(fake_server)
        assert asked.model == "gemma4:26b-a4b-it-q4_K_M" and "You are a cook." in (
            asked.messages[0].content or ""
        )
        assert "todo" in asked.tools and "terminal" not in asked.tools
        assert cook["browser_profile"] == ""
        renamed = http.put(
            f"/agents/profiles/{cook['id']}",
            json={**spec, "name": "Chef", "model": "", "browser_profile": "shop"},
        )
        assert renamed.status_code == 200 and renamed.json()["name"] == "Chef"
        assert renamed.json()["browser_profile"] == "shop"  # the sign-in its browser opens with
        mine = {p["id"]: p for p in http.get("/agents/profiles").json()}
        assert mine[cook["id"]]["browser_profile"] == "shop" and mine["secretary"]["browser_profile"] == ""
        for bad_spec in (
            {**spec, "tools": ["no_such_tool"]},
            {**spec, "model": "x"},
            {**spec, "name": ""},
            {**spec, "browser_profile": "../etc"},
        ):
            assert http.post("/agents/profiles", json=bad_spec).status_code == 422, bad_spec

        # Another user sees none of it.
        with bearer(navi, add_user(navi, "bob")) as bob:
            assert cook["id"] not in [p["id"] for p in bob.get("/agents/profiles").json()]
            assert bob.get("/agents/instructions").json() == {"about_me": "", "how_to_answer": ""}
            assert bob.post("/sessions", json={"profile_id": cook["id"]}).status_code == 422
            assert bob.put(f"/agents/profiles/{cook['id']}", json=spec).status_code == 404
            assert bob.delete(f"/agents/profiles/{cook['id']}").status_code == 404
            assert bob.patch(f"/sessions/{sid}", json={"model": "ollama:plain:1b"}).status_code == 404
        assert http.delete("/agents/profiles/secretary").status_code == 404  # not made on the page
        assert http.delete(f"/agents/profiles/{cook['id']}").status_code == 204
        assert cook["id"] not in [p["id"] for p in http.get("/agents/profiles").json()]


async def test_the_stores_keep_each_users_model_for_a_builtin_profile(store: PreferenceStore) -> None:
    assert await store.profile_models("ana") == {}
    await store.set_profile_model("ana", "secretary", "ollama:plain:1b")
    await store.set_profile_model("ana", "smart_home", "ollama:gemma4:e2b-it-q8_0")
    await store.set_profile_model("ana", "secretary", "ollama:qwen3:8b")  # picked again: replaced
    await store.set_profile_model("bob", "secretary", "ollama:plain:1b")
    assert await store.profile_models("ana") == {
        "secretary": "ollama:qwen3:8b",
        "smart_home": "ollama:gemma4:e2b-it-q8_0",
    }
    await store.set_profile_model("ana", "smart_home", None)  # back to the profile's own
    assert await store.profile_models("ana") == {"secretary": "ollama:qwen3:8b"}
    assert await store.profile_models("bob") == {"secretary": "ollama:plain:1b"}


def test_a_model_picked_for_a_builtin_profile_is_that_users_alone(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    for n in range(3):
        script.turn(f"Answer {n}.")
    switch = ScriptedCall("switch_profile", {"profile_id": "server_admin", "reason": "ops"})
    script.turn(Reply(tool_calls=[switch]), Reply(text="On the admin's model."))
    script.turn("Answer 4.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi, navi.client() as http:
        secretary = {p["id"]: p for p in http.get("/agents/profiles").json()}["secretary"]
        assert (secretary["model"], secretary["model_choice"], secretary["default_model"]) == (
            "gemma4:e2b-it-q8_0",
            "",
            "gemma4:e2b-it-q8_0",
        )
        picked = http.put("/agents/profiles/secretary/model", json={"model": "ollama:plain:1b"})
        assert picked.status_code == 200, picked.text
        assert (picked.json()["model"], picked.json()["model_choice"]) == ("plain:1b", "ollama:plain:1b")
        listed = {p["id"]: p for p in http.get("/agents/profiles").json()}
        assert (listed["secretary"]["model"], listed["secretary"]["default_model"]) == (
            "plain:1b",
            "gemma4:e2b-it-q8_0",
        )
        assert listed["smart_home"]["model"] == "gemma4:e2b-it-q8_0"  # only the profile picked for

        # A conversation of ana's in the profile runs on her model; one with its own model keeps it.
        sid = navi.new_session("secretary")
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Hi"}).status_code == 200
        assert turn_request(fake_server).model == "plain:1b"
        exported = http.get(f"/sessions/{sid}/export").json()["session"]  # the archive names it too
        assert (exported["provider"], exported["model"]) == ("ollama", "plain:1b")
        own = navi.new_session("secretary")
        assert (
            http.patch(f"/sessions/{own}", json={"model": "ollama:gemma4:26b-a4b-it-q4_K_M"}).status_code
            == 200
        )
        assert http.post(f"/sessions/{own}/messages", json={"content": "Hi"}).status_code == 200
        assert turn_request(fake_server).model == "gemma4:26b-a4b-it-q4_K_M"

        # Bob is not affected: his list and his runs keep the profile's model.
        with bearer(navi, add_user(navi, "bob")) as bob:
            assert {p["id"]: p for p in bob.get("/agents/profiles").json()}["secretary"]["model"] == (
                "gemma4:e2b-it-q8_0"
            )
            his = bob.post("/sessions", json={"profile_id": "secretary"}).json()["session_id"]
            assert bob.post(f"/sessions/{his}/messages", json={"content": "Hi"}).status_code == 200
            assert turn_request(fake_server).model == "gemma4:e2b-it-q8_0"
            cook = http.post("/agents/profiles", json={"name": "Cook"}).json()["id"]
            assert (
                bob.put(f"/agents/profiles/{cook}/model", json={"model": "ollama:plain:1b"}).status_code
                == 404
            )

        # Bad input is refused and changes nothing.
        for bad in ({"model": "plain:1b"}, {"model": "nowhere:x"}, {"model": "ollama:"}):
            refused = http.put("/agents/profiles/secretary/model", json=bad)
            assert refused.status_code == 422 and "backend:model" in refused.json()["detail"], bad
        assert http.put("/agents/profiles/no_such/model", json={"model": ""}).status_code == 404
        own_profile = http.put(f"/agents/profiles/{cook}/model", json={"model": "ollama:plain:1b"})
        assert own_profile.status_code == 422 and "PUT /agents/profiles/" in own_profile.json()["detail"]
        assert {p["id"]: p for p in http.get("/agents/profiles").json()}["secretary"]["model"] == "plain:1b"

        # A switch of profile mid-turn takes the model ana picked for the profile it switches to.
        assert (
            http.put("/agents/profiles/server_admin/model", json={"model": f"ollama:{BIG}"}).status_code
            == 200
        )
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Check the disk"}).status_code == 200
        before, after = [
            r for r in fake_server.requests if "a short title" not in (r.messages[0].content or "")
        ][-2:]
        assert (before.model, after.model) == ("plain:1b", BIG)
        assert http.get(f"/sessions/{sid}").json()["profile_id"] == "server_admin"  # the switch is kept

        # Empty: the profile's own model again, from the next message on.
        cleared = http.put("/agents/profiles/secretary/model", json={"model": ""})
        assert (cleared.json()["model"], cleared.json()["model_choice"]) == ("gemma4:e2b-it-q8_0", "")
        again = navi.new_session("secretary")
        assert http.post(f"/sessions/{again}/messages", json={"content": "Again"}).status_code == 200
        assert turn_request(fake_server).model == "gemma4:e2b-it-q8_0"
