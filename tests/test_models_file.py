"""The model list (issue 48, items 1-3) through Navi: MODELS_FILE read and checked, a turn that
falls back recording the model that wrote it, side calls on a second endpoint, the breaker shared
by two workers on PostgreSQL, `GET /models` (token and users) and `navi models list|test`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from navi.api import model_choice
from navi.api.routes import models as routes_models
from navi.cli.doctor import _endpoints
from navi.cli.main import _register, app
from navi.compose import SetupError, build_runtime
from navi.compose.models import build_backends, build_profiles, model_list
from navi.config import load_settings
from navi.llm.base import CallOptions
from navi.llm.chain import ChainShared, ModelChain
from navi.llm.endpoints import ModelEndpoint, ModelList, parse_models
from navi.llm.messages import Message
from navi.llm.ollama_backend import OllamaBackend
from navi.storage import migrate
from navi.storage.breaker import SqlBreaker
from navi.storage.database import Database, postgres_url
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply
from tests.agent_helpers import collect
from tests.server_helpers import live_navi

_register()
runner = CliRunner()

BIG = "gemma4:26b-a4b-it-q4_K_M"
SMALL = "gemma4:e2b-it-q8_0"


def models_file(tmp_path: Path, first: FakeModelServer, second: FakeModelServer, extra: str = "") -> Path:
    path = tmp_path / "models.toml"
    path.write_text(
        f"""
side = "small"

[[models]]
id = "big"
backend = "ollama"
url = "{first.url}"
model = "{BIG}"
window = 32768
capabilities = ["tools", "vision"]
price = [2.0, 8.0]

[[models]]
id = "small"
backend = "openai"
url = "{second.openai_url}"
model = "{SMALL}"
key_env = "SMALL_KEY"
capabilities = ["tools"]

[chains]
default = ["big", "small"]
{extra}
""",
        encoding="utf-8",
    )
    return path


def settings_for(tmp_path: Path, **kw: Any) -> Any:
    base: dict[str, Any] = {
        "db_path": str(tmp_path / "navi.db"),
        "session_files_dir": str(tmp_path / "files"),
        "tools_dir": str(tmp_path / "tools"),
        "skills_dir": str(tmp_path / "skills"),
        "navi_approval_mode": "auto",
        "planning_enabled": False,
    }
    base.update(kw)
    return load_settings(**base)


# --- the file ---------------------------------------------------------------------------------------
def test_without_a_file_the_env_model_is_the_one_entry(tmp_path: Path) -> None:
    models = model_list(settings_for(tmp_path, ollama_default_model="llama3:8b"))
    assert not models.from_file and list(models.endpoints) == ["default"]
    only = models.get("default")
    assert (only.backend, only.model, only.implicit) == ("ollama", "llama3:8b", True)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("[[models]]\nid = 'a'\nbackend = 'llamafile'\nmodel = 'm'", "`backend` must be"),
        ("[[models]]\nid = 'a'\nbackend = 'ollama'\nmodel = 'm'\nwindow = 10", "`window`"),
        ("[[models]]\nid = 'a'\nbackend = 'ollama'\nmodel = 'm'\nprice = [1]", "`price`"),
        ("[[models]]\nid = 'a'\nbackend = 'ollama'\nmodel = 'm'\ncapabilities = ['smell']", "`capabilities`"),
        ("[[models]]\nid = 'a'\nbackend = 'ollama'\nmodel = 'm'\n[chains]\ndefault = ['a', 'zz']", "'zz'"),
        (
            "[[models]]\nid = 'a'\nbackend = 'ollama'\nmodel = 'm'\n[[models]]\nid = 'a'\n"
            "backend = 'ollama'\nmodel = 'n'",
            "used twice",
        ),
        ("side = 'nobody'", "'nobody' is not a model id"),
        ("[[models]]\nid = 'ollama'\nbackend = 'ollama'\nmodel = 'm'", "backend's name"),
        ("models = [", "not valid TOML"),
    ],
)
def test_a_file_navi_cannot_use_stops_it_naming_what_is_wrong(tmp_path: Path, body: str, said: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SetupError) as caught:
        model_list(settings_for(tmp_path, models_file=str(path)))
    assert said in str(caught.value) and "MODELS_FILE" in str(caught.value)


def test_without_chains_the_default_chain_is_the_files_models_in_order() -> None:
    env = ModelEndpoint(id="default", backend="ollama", model="env-model", implicit=True)
    two = (
        "[[models]]\nid = 'b'\nbackend = 'ollama'\nmodel = 'm'\n"
        "[[models]]\nid = 'a'\nbackend = 'openai'\nmodel = 'n'"
    )
    models = parse_models(two, env)
    assert models.chain() == ("b", "a") and list(models.endpoints) == ["b", "a", "default"]
    own = parse_models("[[models]]\nid = 'default'\nbackend = 'openai'\nmodel = 'x'", env)
    assert own.chain() == ("default",) and own.get("default").model == "x"
    assert parse_models("", env).chain() == ("default",)


def test_side_model_without_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="SIDE_MODEL names 'small' but MODELS_FILE is unset"):
        model_list(settings_for(tmp_path, side_model="small"))


def test_profiles_use_their_chain_and_doctor_checks_each_endpoint(
    tmp_path: Path, fake_server: FakeModelServer, other: FakeModelServer
) -> None:
    path = models_file(tmp_path, fake_server, other, 'server_admin = ["small", "default"]')
    settings = settings_for(tmp_path, models_file=str(path))
    backends = build_backends(settings)
    profiles = build_profiles(settings, backends)
    admin, secretary = profiles.get("server_admin"), profiles.get("secretary")
    assert (profiles.backend_of(admin), profiles.model_of(admin)) == ("models:server_admin", SMALL)
    assert (profiles.backend_of(secretary), profiles.model_of(secretary)) == ("models", BIG)
    assert _endpoints(backends, "models:server_admin", SMALL) == [("small", SMALL), ("default", SMALL)]
    assert _endpoints(backends, "models", BIG) == [("big", BIG), ("small", SMALL)]
    assert _endpoints(backends, "ollama", "llama3") == [("ollama", "llama3")]


async def test_a_chain_for_no_profile_is_refused(tmp_path: Path, fake_server: FakeModelServer) -> None:
    path = models_file(tmp_path, fake_server, fake_server, 'nobody = ["big"]')
    with pytest.raises(SetupError, match="chains of no profile: nobody"):
        await build_runtime(settings_for(tmp_path, models_file=str(path)), runs_agents=False)


# --- a turn through the chain -----------------------------------------------------------------------
async def test_a_turn_falls_back_and_its_answer_says_which_model_wrote_it_and_why(
    tmp_path: Path, fake_server: FakeModelServer, other: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMALL_KEY", "sk-small")
    other.api_key = "sk-small"  # the key reaches the endpoint from the variable the file names
    path = models_file(tmp_path, fake_server, other)
    rt = await build_runtime(settings_for(tmp_path, models_file=str(path)), runs_agents=False)
    try:
        sid = (await rt.sessions.create("secretary")).id
        fake_server.enqueue(Reply(status=503, error="overloaded right now"))
        other.enqueue(Reply(text="the small model answers", prompt_tokens=50, completion_tokens=5))
        events = await collect(rt.agent.run_stream(sid, "hello"))
        assert events[-1].type == "stream_end" and events[-1].content == "the small model answers"
        await rt.agent.settle()  # naming: a side call, to `small` first
        session = await rt.sessions.get(sid)
        assert session is not None
        answer = [m for m in session.messages if m.role == "assistant"][-1]
        meta = answer.metadata
        assert (meta.model, meta.endpoint) == (SMALL, "small")
        assert (
            meta.fallback is not None and meta.fallback[0].startswith("big: ") and "503" in meta.fallback[0]
        )
        assert meta.cost is None  # `small` has no price
        # Big was asked once (the answer); small answered the turn and named the session.
        assert [r.model for r in fake_server.requests] == [BIG]
        assert [r.model for r in other.requests] == [SMALL, SMALL]

        # Within the cool-down the next turn goes straight to small; the breaker is in the database.
        fake_server.enqueue("never asked")
        other.enqueue("small again")
        events = await collect(rt.agent.run_stream(sid, "and now?"))
        assert events[-1].content == "small again" and len(fake_server.requests) == 1
        assert rt.backends.models is not None and isinstance(rt.backends.models.breaker, SqlBreaker)
        assert list(await rt.backends.models.breaker.trips()) == ["big"]

        # After it, big answers again, priced by the list (2 and 8 USD per million tokens).
        rt.backends.models.clock = lambda: 10**10
        fake_server.script.clear()
        fake_server.enqueue(Reply(text="big is back", prompt_tokens=1000, completion_tokens=100))
        events = await collect(rt.agent.run_stream(sid, "once more"))
        assert events[-1].content == "big is back"
        session = await rt.sessions.get(sid)
        assert session is not None
        last = session.messages[-1].metadata
        assert (last.model, last.endpoint, last.fallback, last.cost) == (BIG, "big", None, 0.0028)
        assert await rt.backends.models.breaker.trips() == {}
    finally:
        await rt.aclose()


async def test_a_stream_broken_mid_answer_keeps_its_text_and_says_so(
    tmp_path: Path, fake_server: FakeModelServer, other: FakeModelServer
) -> None:
    path = models_file(tmp_path, fake_server, other)
    rt = await build_runtime(settings_for(tmp_path, models_file=str(path)), runs_agents=False)
    try:
        sid = (await rt.sessions.create("secretary")).id
        fake_server.enqueue(Reply(text="a long answer that breaks", chunk_chars=4, error_after=3))
        events = await collect(rt.agent.run_stream(sid, "tell me"))
        assert events[-1].type == "error"
        session = await rt.sessions.get(sid)
        assert session is not None
        kept = [m for m in session.messages if m.role == "assistant" and m.content]
        assert kept and kept[0].content == "a long answer"[:12]
        assert "mid-stream" in (kept[0].metadata.interrupted or "")
        assert other.requests == []  # no silent switch mid-answer
    finally:
        await rt.aclose()


# --- two workers, one breaker -------------------------------------------------------------------------
@pytest.mark.postgres
async def test_two_workers_share_the_breaker_through_postgresql(
    pg_url: str, fake_server: FakeModelServer, other: FakeModelServer
) -> None:
    url = postgres_url(pg_url)
    first_db, second_db = Database(url), Database(url)
    await migrate.upgrade(first_db)
    backends = {"a": OllamaBackend(fake_server.url), "b": OllamaBackend(other.url)}
    try:
        endpoints = {
            "a": ModelEndpoint(id="a", backend="ollama", model=BIG),
            "b": ModelEndpoint(id="b", backend="ollama", model=SMALL),
        }
        models = ModelList(endpoints, {"default": ("a", "b")}, "", True)

        def worker(db: Database) -> ModelChain:
            shared = ChainShared(models, breaker=SqlBreaker(db), clock=lambda: 5000.0, cooldown=60)
            return ModelChain("models", ["a", "b"], shared, backends.__getitem__)

        one, two = worker(first_db), worker(second_db)
        options = CallOptions(model="x", max_tokens=16)
        fake_server.enqueue(Reply(status=429, error="too many requests"))
        answered = [c async for c in one.stream_complete([Message.user("hi")], options)]
        assert answered[-1].endpoint == "b"  # type: ignore[union-attr]
        # The other worker skips `a` without asking it.
        fake_server.enqueue("should not be asked")
        answered = [c async for c in two.stream_complete([Message.user("hi")], options)]
        assert answered[-1].endpoint == "b" and len(fake_server.requests) == 1  # type: ignore[union-attr]
        trips = await SqlBreaker(second_db).trips()
        assert trips["a"].until == 5060.0 and "too many requests" in trips["a"].reason
        # A second failure seen by the other worker doubles the cool-down for both.
        await SqlBreaker(second_db).failed("a", "again", 5000.0, 60)
        assert (await SqlBreaker(first_db).trips())["a"].until == 5120.0
    finally:
        for backend in backends.values():
            await backend.aclose()
        await first_db.dispose()
        await second_db.dispose()


# --- GET /models and navi models ---------------------------------------------------------------------
def test_get_models_lists_every_endpoint_with_its_state_for_signed_in_users(
    tmp_path: Path, fake_server: FakeModelServer, other: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routes_models, "CHECK_TIMEOUT", 30.0)  # a loaded machine is not a hanging server
    monkeypatch.setattr(model_choice, "LIST_TIMEOUT", 30.0)  # the same for the servers' model lists
    dead = f"http://127.0.0.1:{free_port()}"
    extra = f'\n[[models]]\nid = "gone"\nbackend = "ollama"\nurl = "{dead}"\nmodel = "{SMALL}"\n'
    path = models_file(tmp_path, fake_server, other)
    path.write_text(path.read_text().replace("[chains]", extra + "\n[chains]"), encoding="utf-8")

    async def add_user() -> str:
        rt = await build_runtime(
            settings_for(tmp_path, models_file=str(path)), seed_tools=False, runs_agents=False
        )
        try:
            return (await rt.users.add("alice"))[1]
        finally:
            await rt.aclose()

    alice_token = asyncio.run(add_user())
    token = "a-long-enough-test-token"
    with live_navi(tmp_path, fake_server, models_file=str(path), navi_api_token=token) as navi:
        with navi.client(anonymous=True) as anonymous:
            assert anonymous.get("/models").status_code == 401
        with navi.client() as owner:
            body = owner.get("/models").json()
            # A conversation may run on one endpoint of the list: its id is the choice's backend.
            sid = navi.new_session()
            picked = owner.patch(f"/sessions/{sid}", json={"model": f"small:{SMALL}"})
            assert picked.status_code == 200, picked.text
            assert owner.get(f"/sessions/{sid}").json()["model"] == f"small:{SMALL}"
        with httpx.Client(base_url=navi.url, headers={"Authorization": f"Bearer {alice_token}"}) as alice:
            hers = alice.get("/models", params={"check": "false"}).json()
    by_id = {m["id"]: m for m in body["models"]}
    assert list(by_id) == ["big", "small", "gone", "default"]
    assert body["chains"]["default"] == ["big", "small"] and body["side"] == "small" and body["from_file"]
    assert by_id["big"]["state"] == {
        "reachable": True,
        "model_present": True,
        "window": 32768,
        "detail": f"{BIG} on Ollama {fake_server.version} at {fake_server.url}",
    }
    assert by_id["big"]["price"] == [2.0, 8.0] and by_id["big"]["url"] == fake_server.url
    assert by_id["small"]["key_env"] == "SMALL_KEY" and "sk-" not in json.dumps(body)
    assert by_id["gone"]["state"]["reachable"] is False and by_id["gone"]["state"]["model_present"] is None
    assert by_id["default"]["implicit"] is True
    # The models to pick: what each endpoint's server lists, and each endpoint's own model (a dead
    # server's too, unlisted); no chain is offered (its backend name is no "backend:model" prefix).
    choices = {c["id"]: c for c in body["choices"]}
    assert choices[f"big:{BIG}"] == {"id": f"big:{BIG}", "backend": "big", "model": BIG, "listed": True}
    assert choices[f"small:{SMALL}"]["backend"] == "small"
    assert choices[f"gone:{SMALL}"]["listed"] is False
    assert not [c for c in choices.values() if c["backend"].startswith("models")]
    assert [c["id"] for c in hers["choices"]] == [c["id"] for c in body["choices"]]
    # Another user sees the list, never the servers' addresses, and no state when not asked.
    assert [m["id"] for m in hers["models"]] == ["big", "small", "gone", "default"]
    assert {m["url"] for m in hers["models"]} == {""} and {str(m["state"]) for m in hers["models"]} == {
        "None"
    }


def test_navi_models_list_and_test(
    tmp_path: Path, fake_server: FakeModelServer, other: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routes_models, "CHECK_TIMEOUT", 30.0)
    path = models_file(tmp_path, fake_server, other)
    env = {
        "DB_PATH": str(tmp_path / "n.db"),
        "TOOLS_DIR": str(tmp_path / "tools"),
        "LOG_LEVEL": "WARNING",
        "MODELS_FILE": str(path),
    }
    listed = runner.invoke(app, ["models", "list"], env=env)
    assert listed.exit_code == 0, listed.output
    assert f"big: ollama {BIG} at {fake_server.url}" in listed.stdout
    assert "chain default: big → small" in listed.stdout and "side calls: small first" in listed.stdout
    assert "reachable" not in listed.stdout  # `list` asks no server
    tested = runner.invoke(app, ["models", "test", "--json"], env=env)
    assert tested.exit_code == 0, tested.output
    states = {m["id"]: m["state"] for m in json.loads(tested.stdout)["models"]}
    assert states["big"]["reachable"] and states["small"]["reachable"]
    assert states["big"]["detail"].endswith(f"at {fake_server.url}")
    assert states["small"]["model_present"] is True
    # A model the server lacks: `test` says so and exits 1.
    path.write_text(path.read_text().replace(f'model = "{BIG}"', 'model = "missing:7b"'), encoding="utf-8")
    missing = runner.invoke(app, ["models", "test"], env=env)
    assert missing.exit_code == 1
    assert "model present no" in missing.stdout and "not ready: big" in missing.stderr
