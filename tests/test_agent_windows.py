"""The context-window service: one answer per model for the engine and the REST API.

The real Ollama adapter against the fake model server over HTTP.
"""

from __future__ import annotations

from navi.agent.windows import ContextWindows
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.registry import BackendRegistry
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.testing.fake_server import FakeModel, FakeModelServer

SMALL = FakeModel("small:1b", context_length=8192, capabilities=("completion",), family="llama")
BIG = FakeModel("big:9b", context_length=262144)


def service(url: str, num_ctx: int) -> tuple[ContextWindows, BackendRegistry, ProfileRegistry]:
    backends = BackendRegistry()
    backends.register_instance("ollama", OllamaBackend(url, connect_timeout=1.0), default_model=BIG.name)
    profiles = ProfileRegistry(default_backend="ollama", default_models={"ollama": BIG.name})
    for model in (SMALL, BIG):
        profiles.register(
            AgentProfile(id=model.name, name=model.name, description="", system_prompt=".", model=model.name)
        )
    return ContextWindows(backends, profiles, num_ctx), backends, profiles


async def test_the_window_is_the_smaller_of_num_ctx_and_the_models_and_is_asked_once() -> None:
    with FakeModelServer(models=[SMALL, BIG]) as server:
        windows, backends, profiles = service(server.url, 32768)
        small, big = profiles.get(SMALL.name), profiles.get(BIG.name)
        assert not windows.known(small)
        assert await windows.for_profile(small) == 8192  # the model holds less than Navi's setting
        assert await windows.for_profile(big) == 32768  # Navi's setting is the smaller
        assert windows.known(small) and windows.known(big)
        llm = backends.get("ollama")
        assert await windows.window(llm, SMALL.name) == 8192
        assert not windows.native_tools(llm, SMALL.name) and windows.native_tools(llm, BIG.name)
        await backends.aclose()
    # The server is gone: the answers are remembered.
    assert await windows.for_profile(small) == 8192


async def test_an_unreachable_server_is_not_remembered() -> None:
    server = FakeModelServer(models=[SMALL]).start()
    port = server.port
    server.stop()  # nothing listens there now
    windows, backends, profiles = service(f"http://127.0.0.1:{port}", 32768)
    small = profiles.get(SMALL.name)
    assert await windows.for_profile(small, wait=5) == 32768  # the configured window meanwhile
    assert not windows.known(small)
    with FakeModelServer(models=[SMALL], port=port):  # back, on the same address
        assert await windows.for_profile(small) == 8192
        assert windows.known(small)
    await backends.aclose()


async def test_a_profile_on_a_backend_navi_lacks_gets_the_configured_window() -> None:
    windows, _backends, profiles = service("http://127.0.0.1:9", 4096)
    elsewhere = AgentProfile(
        id="far", name="Far", description="", system_prompt=".", model="x", llm_backend="nowhere"
    )
    profiles.register(elsewhere)
    assert windows.known(elsewhere) and await windows.for_profile(elsewhere) == 4096
