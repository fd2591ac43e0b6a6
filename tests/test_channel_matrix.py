"""The Matrix channel against a real Synapse homeserver the tests start (tests/helpers/synapse.py):
a second client plays the person."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.synapse import Synapse, start_synapse

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    yield from start_synapse(tmp_path_factory.mktemp("synapse"))


async def test_two_users_of_the_test_homeserver_exchange_a_message(synapse: Synapse) -> None:
    ana, bob = synapse.register().client(), synapse.register().client()
    try:
        room = await ana.create_room([bob.user_id])
        await bob.sync()
        assert room in bob.invites
        await bob.join(room)
        await ana.send(room, "Hello Bob")
        [got] = await bob.messages(room, 1, sender=ana.user_id)
        assert got["content"]["body"] == "Hello Bob"
        assert (await ana.members(room)) == {ana.user_id: "join", bob.user_id: "join"}
    finally:
        await ana.close()
        await bob.close()
