"""memory_search and forget against the memory store interface."""

from __future__ import annotations

from navi import runctx
from navi.memory.in_memory import InMemoryMemoryStore
from navi.tools.builtin.memory import ForgetTool, MemorySearchTool


async def test_search_and_forget() -> None:
    store = InMemoryMemoryStore()
    await store.upsert_fact("location", "home city", "Oslo")
    await store.upsert_fact("pets", "cat", "Miso, a grey tabby")
    await store.upsert_fact("location", "office", "Bergen", owner="someone-else")
    search, forget = MemorySearchTool(store), ForgetTool(store)
    with runctx.using(runctx.RunContext(session_id="s1")):
        found = await search.execute({"query": "where is home"})
        assert found.success and "location: home_city = Oslo" in found.output
        assert "Bergen" not in found.output  # another owner's facts stay invisible
        none = await search.execute({"query": "bicycle"})
        assert none.success and "Nothing remembered" in none.output
        gone = await forget.execute({"key": "Home City", "category": "location"})
        assert gone.success and "Forgot 1 fact" in gone.output
        assert "Oslo" not in (await search.execute({"query": "home city oslo"})).output
        former = await search.execute({"query": "home city oslo", "history": True})
        assert "location: home_city = Oslo" in former.output and "[former value]" in former.output
        again = await forget.execute({"key": "home city"})
        assert not again.success and "no remembered fact" in (again.error or "")
    assert [f.key for f in await store.get_all_facts()] == ["cat"]
