"""The Matrix channel against a real Synapse homeserver the tests start (tests/helpers/synapse.py):
a second client plays the person over the client-server API. The model is the scripted backend;
Navi is the real runtime and services (SQLite), its channel worker started by the composition root."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from navi.testing.script import Reply, ScriptedCall
from tests.helpers.matrix_world import World, joined, navi_messages, start_world
from tests.helpers.synapse import Synapse, SyncProxy

pytestmark = pytest.mark.slow


@pytest.fixture
async def world(tmp_path: Path, synapse: Synapse) -> AsyncIterator[World]:
    made = await start_world(tmp_path, synapse)
    try:
        yield made
    finally:
        await made.stop()


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


async def test_an_allowed_user_asks_and_navi_answers_with_a_tool_result(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "expr 42 \\* 17"})]),
        "The product is **714**:\n\n- 42 × 17",
        "Still 714.",
    )
    room = await world.room_with_navi()  # Ana's invite was accepted: she is listed
    asked = await world.ana.send(room, "What is 42 times 17?")
    [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
    content = answer["content"]
    assert content["msgtype"] == "m.text"
    assert content["body"] == "The product is **714**:\n\n- 42 × 17"  # the plain body kept
    assert content["format"] == "org.matrix.custom.html"
    html = "<p>The product is <strong>714</strong>:</p>\n<ul>\n<li>42 × 17</li>\n</ul>"
    assert content["formatted_body"] == html
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    # The tool ran, and its result reached the model before it answered.
    first, second = world.turns()[:2]
    assert first.last_user_text == "What is 42 times 17?"
    assert any(m.role == "tool" and "714" in (m.content or "") for m in second.messages)

    # Ana saw Navi typing while it worked, and the notice ended with the answer.
    typing = [e for e in world.ana.ephemeral if e["type"] == "m.typing" and e["room_id"] == room]
    assert any(world.navi.user_id in e["content"]["user_ids"] for e in typing)
    await world.ana.sync()
    latest = [e for e in world.ana.ephemeral if e["type"] == "m.typing" and e["room_id"] == room][-1]
    assert world.navi.user_id not in latest["content"]["user_ids"]

    # The room is the session: the next message continues it.
    await world.ana.send(room, "And again?")
    second_answer = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
    assert second_answer["content"]["body"] == "Still 714."
    [session] = await world.rt.sessions.list(owner="ana")
    stored = await world.rt.sessions.get(session.id, owner="ana")
    assert stored is not None
    assert [m.content for m in stored.messages if m.role == "user"] == ["What is 42 times 17?", "And again?"]
    # Navi's own answers, which its sync also brings, are not messages to it (not even a stranger's).
    logged = capsys.readouterr()
    assert "channel.stranger" not in logged.out + logged.err


async def test_strangers_get_nothing_and_their_invites_are_declined(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    eve = world.synapse.register().client()
    try:
        world.script.turn("Hello Ana.")
        # Eve invites Navi to her room: declined.
        eves_room = await eve.create_room([world.navi.user_id])
        await joined(eve, eves_room, world.navi.user_id, state="leave")
        # Eve writes in Ana's room, where Navi is: no answer. Then Ana writes: answered.
        room = await world.room_with_navi()
        await world.ana.http.post(f"/rooms/{room}/invite", json={"user_id": eve.user_id})
        await eve.join(room)
        await eve.send(room, "Hi Navi, I am Eve")
        await world.ana.send(room, "Hi, it is Ana")
        [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
        assert answer["content"]["body"] == "Hello Ana."
        await asyncio.sleep(1)
        await world.ana.sync()
        assert len(navi_messages(world, room)) == 1
        assert [r.last_user_text for r in world.turns()] == ["Hi, it is Ana"]
        assert [s.owner for s in await world.rt.sessions.list()] == ["ana"]
        logged = capsys.readouterr()
        assert "channel.stranger" in logged.out + logged.err
        assert eve.user_id in logged.out + logged.err
    finally:
        await eve.close()


async def test_an_approval_is_answered_by_replying_yes(tmp_path: Path, synapse: Synapse) -> None:
    world = await start_world(tmp_path, synapse, navi_approval_mode="smart")
    try:
        marker = tmp_path / "made-from-matrix"
        world.script.turn(
            Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]), "Done."
        )
        room = await world.room_with_navi()
        await world.ana.send(room, "Please make the file")
        [question] = await world.ana.messages(room, 1, sender=world.navi.user_id)
        asked = question["content"]["body"]
        assert "terminal" in asked and f"touch {marker}" in asked and "Reply yes" in asked
        assert not marker.exists()
        # A Matrix reply, with the quoted fallback clients put before what the person wrote.
        await world.ana.send(
            room,
            f"> <{world.navi.user_id}> Navi wants to run terminal\n\nyes",
            **{"m.relates_to": {"m.in_reply_to": {"event_id": question["event_id"]}}},
        )
        answer = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
        assert answer["content"]["body"] == "Done."
        assert marker.exists()
        assert len(await world.rt.sessions.list(owner="ana")) == 1
    finally:
        await world.stop()


async def test_a_matrix_thread_is_a_session_of_its_own_answered_in_the_thread(world: World) -> None:
    world.script.turn("About the room.", "About the thread.", "Thread again.")
    room = await world.room_with_navi()
    root = await world.ana.send(room, "First, in the room")
    await world.ana.messages(room, 1, sender=world.navi.user_id)
    in_thread = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True}
    asked = await world.ana.send(
        room, "Now in a thread", **{"m.relates_to": {**in_thread, "m.in_reply_to": {"event_id": root}}}
    )
    answer = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
    assert answer["content"]["body"] == "About the thread."
    assert answer["content"]["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": root,
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": asked},
    }
    await world.ana.send(
        room, "More in the thread", **{"m.relates_to": {**in_thread, "m.in_reply_to": {"event_id": asked}}}
    )
    await world.ana.messages(room, 3, sender=world.navi.user_id)
    sessions = await world.rt.sessions.list(owner="ana")
    texts = []
    for session in sessions:
        stored = await world.rt.sessions.get(session.id, owner="ana")
        assert stored is not None
        texts.append(sorted(m.content for m in stored.messages if m.role == "user"))
    assert sorted(texts) == [["First, in the room"], ["More in the thread", "Now in a thread"]]


async def test_a_long_answer_is_split_into_several_messages(world: World) -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 400 for i in range(10)]  # about 20,000 characters
    world.script.turn("\n\n".join(p.strip() for p in paragraphs))
    room = await world.room_with_navi()
    await world.ana.send(room, "Tell me a long story")
    first, second = await world.ana.messages(room, 2, sender=world.navi.user_id)
    assert first["content"]["body"].startswith("Paragraph 0:")
    assert second["content"]["body"].startswith("Paragraph ")
    joined_text = first["content"]["body"] + "\n\n" + second["content"]["body"]
    assert joined_text == "\n\n".join(p.strip() for p in paragraphs)
    assert all(len(m["content"]["body"]) <= 12_000 for m in (first, second))


async def test_history_from_before_the_start_is_not_answered(tmp_path: Path, synapse: Synapse) -> None:
    navi, ana = synapse.register(), synapse.register().client()
    room = await ana.create_room([navi.user_id], direct=True)
    await ana.send(room, "An old question, asked while Navi was away")
    world = await start_world(tmp_path, synapse, navi=navi, ana=ana)
    try:
        world.script.turn("The new one is answered.")
        await joined(ana, room, navi.user_id)  # the invite sent before the start is taken up
        await ana.send(room, "A new question")
        [answer] = await ana.messages(room, 1, sender=navi.user_id)
        assert answer["content"]["body"] == "The new one is answered."
        await asyncio.sleep(1)
        await ana.sync()
        assert len(navi_messages(world, room)) == 1
        assert [r.last_user_text for r in world.turns()] == ["A new question"]
    finally:
        await world.stop()


async def test_doctor_logs_in_to_the_homeserver(synapse: Synapse, tmp_path: Path) -> None:
    from navi.cli.doctor import channel_checks
    from navi.config import load_settings

    navi = synapse.register()
    base = {
        "db_path": str(tmp_path / "navi.db"),
        "navi_matrix_homeserver": synapse.url,
        "navi_matrix_user": navi.user_id,
        "navi_matrix_password": navi.password,
    }
    [good] = [c async for c in channel_checks(load_settings(**base))]
    assert good.ok and good.what == "channel matrix: logged in"
    with_token = {**base, "navi_matrix_password": "", "navi_matrix_access_token": navi.token}
    [token] = [c async for c in channel_checks(load_settings(**with_token))]
    assert token.ok
    [bad] = [c async for c in channel_checks(load_settings(**{**base, "navi_matrix_password": "wrong-1"}))]
    assert not bad.ok
    assert f"{synapse.url} as {navi.user_id}" in bad.what and "M_FORBIDDEN" in bad.what
    assert "wrong-1" not in bad.what  # no password in the report
    bad_token = {**with_token, "navi_matrix_access_token": "syt_not_a_token"}
    [refused] = [c async for c in channel_checks(load_settings(**bad_token))]
    assert not refused.ok and "access token was refused" in refused.what
    assert "syt_not_a_token" not in refused.what


async def test_a_file_sent_in_the_room_reaches_the_model_as_an_upload(world: World) -> None:
    world.script.turn("It says pelican.")
    room = await world.room_with_navi()
    data = b"The secret word is pelican.\n"
    mxc = await world.ana.upload("note.txt", data, "text/plain")
    content = {"url": mxc, "info": {"mimetype": "text/plain", "size": len(data)}}
    await world.ana.send(room, "note.txt", msgtype="m.file", **content)
    [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
    assert answer["content"]["body"] == "It says pelican."
    [session] = await world.rt.sessions.list(owner="ana")
    saved = Path(world.rt.settings.session_files_dir) / session.id / "note.txt"
    assert saved.read_bytes() == data
    assert f"note.txt → {saved}" in world.turns()[0].last_user_text  # the note uploads get


async def test_a_file_the_run_makes_goes_back_as_a_matrix_file(world: World) -> None:
    world.script.turn("Hello.")
    room = await world.room_with_navi()
    await world.ana.send(room, "Hi")
    await world.ana.messages(room, 1, sender=world.navi.user_id)
    [session] = await world.rt.sessions.list(owner="ana")
    report = Path(world.rt.settings.session_files_dir) / session.id / "report.txt"
    write = ScriptedCall(
        "filesystem", {"action": "write", "path": str(report), "content": "Revenue: up 5%\n"}
    )
    world.script.turn(Reply(tool_calls=[write]), "Here is the report.")
    asked = await world.ana.send(room, "Write me the report")
    _hello, answer, attached = await world.ana.messages(room, 3, sender=world.navi.user_id)
    assert answer["content"]["body"] == "Here is the report."
    assert attached["content"]["msgtype"] == "m.file"
    assert attached["content"]["body"] == "report.txt"
    assert attached["content"]["info"]["mimetype"] == "text/plain"
    assert attached["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    assert await world.ana.download(attached["content"]["url"]) == b"Revenue: up 5%\n"


async def test_navi_logs_in_again_when_its_login_is_revoked(world: World) -> None:
    world.script.turn("Before.", "After.")
    room = await world.room_with_navi()
    await world.ana.send(room, "Hello")
    await world.ana.messages(room, 1, sender=world.navi.user_id)
    # Every access token of Navi's account revoked (an admin, or "log out all sessions").
    revoke = await world.ana.http.post(
        "/logout/all", headers={"Authorization": f"Bearer {world.navi.token}"}, json={}
    )
    revoke.raise_for_status()
    await world.ana.send(room, "Still there?")
    second = (await world.ana.messages(room, 2, sender=world.navi.user_id, within=60))[1]
    assert second["content"]["body"] == "After."
    assert [r.last_user_text for r in world.turns()] == ["Hello", "Still there?"]


async def test_an_answer_whose_send_answer_was_lost_to_a_revoked_login_is_sent_once(
    tmp_path: Path, synapse: Synapse
) -> None:
    """The answer reached the room, but Navi's login was revoked before it read the send's answer
    (the proxy revokes it there and answers that the login is unknown): Navi logs in again, finds
    its answer in the room by its own key and does not send it a second time."""
    navi = synapse.register()
    lost: list[str] = []

    async def revoke_at_the_first_answer(path: str, token: str) -> bool:
        if lost or "/send/m.room.message/" not in path:
            return False
        lost.append(path)
        async with httpx.AsyncClient(timeout=30) as http:
            revoked = await http.post(
                f"{synapse.url}/_matrix/client/v3/logout/all",
                headers={"Authorization": f"Bearer {token}"},
                json={},
            )
        revoked.raise_for_status()
        return True

    with SyncProxy(synapse.url, lose_answer=revoke_at_the_first_answer) as proxy:
        world = await start_world(tmp_path, synapse, navi=navi, homeserver=proxy.url)
        try:
            world.script.turn("Once.", "Next.")
            room = await world.room_with_navi()
            await world.ana.send(room, "Hello")
            await world.ana.messages(room, 1, sender=navi.user_id, within=60)
            await world.ana.send(room, "And now?")
            answers = await world.ana.messages(room, 2, sender=navi.user_id, within=60)
            assert [a["content"]["body"] for a in answers] == ["Once.", "Next."]
            assert len(lost) == 1 and [r.last_user_text for r in world.turns()] == ["Hello", "And now?"]
        finally:
            await world.stop()


async def test_messages_sent_while_navi_answers_wait_and_are_answered_in_order(world: World) -> None:
    """A person who sends three messages in a row while the first is answered gets three answers,
    in order, never a "still answering" refusal."""
    world.script.turn(Reply(text="One.", delay=1.5), "Two.", "Three.")
    room = await world.room_with_navi()
    for text in ("first", "second", "third"):
        await world.ana.send(room, text)
    answers = await world.ana.messages(room, 3, sender=world.navi.user_id, within=60)
    assert [a["content"]["body"] for a in answers] == ["One.", "Two.", "Three."]
    assert [r.last_user_text for r in world.turns()] == ["first", "second", "third"]


async def test_malformed_events_are_skipped_and_the_next_message_answered(world: World) -> None:
    world.script.turn("One.", "Two.")
    room = await world.room_with_navi()
    await world.ana.send(room, "A garbled relation", **{"m.relates_to": "garbage"})
    await world.ana.send(
        room, "A thread of nothing", **{"m.relates_to": {"rel_type": "m.thread", "event_id": 5}}
    )
    await world.ana.send(room, "missing.txt", msgtype="m.file", url="mxc://nowhere.test/none")
    first, second = await world.ana.messages(room, 2, sender=world.navi.user_id)
    assert [first["content"]["body"], second["content"]["body"]] == ["One.", "Two."]
    assert [r.last_user_text for r in world.turns()] == ["A garbled relation", "A thread of nothing"]
    world.script.turn("Three.")
    await world.ana.send(room, "Last")
    third = (await world.ana.messages(room, 3, sender=world.navi.user_id))[2]
    assert third["content"]["body"] == "Three."


async def test_an_image_sent_in_the_room_is_saved_for_the_run(world: World) -> None:
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(picture, format="PNG")
    data = picture.getvalue()
    world.script.turn("A red square.")
    room = await world.room_with_navi()
    mxc = await world.ana.upload("square.png", data, "image/png")
    info = {"mimetype": "image/png", "size": len(data), "w": 8, "h": 8}
    await world.ana.send(room, "square.png", msgtype="m.image", url=mxc, info=info)
    [answer] = await world.ana.messages(room, 1, sender=world.navi.user_id)
    assert answer["content"]["body"] == "A red square."
    [session] = await world.rt.sessions.list(owner="ana")
    saved = Path(world.rt.settings.session_files_dir) / session.id / "square.png"
    assert saved.read_bytes() == data


async def test_a_password_login_is_a_device_logged_out_when_navi_stops(
    tmp_path: Path, synapse: Synapse
) -> None:
    world = await start_world(tmp_path, synapse)
    navi = world.navi.client()  # the registration's own login, to look at the account's devices
    try:
        await world.room_with_navi()  # Navi is logged in and syncing

        async def devices() -> list[str | None]:
            got = await navi.http.get("/devices")
            return sorted(d.get("display_name") or "" for d in got.raise_for_status().json()["devices"])

        assert "Navi" in await devices()
        await world.stop()
        assert "Navi" not in await devices()
    finally:
        await navi.close()
        await world.stop()


async def test_stop_by_command(tmp_path: Path, synapse: Synapse) -> None:
    world = await start_world(tmp_path, synapse, navi_approval_mode="smart")
    try:
        marker = tmp_path / "never"
        world.script.turn(Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]))
        room = await world.room_with_navi()
        await world.ana.send(room, "Please make the file")
        await world.ana.messages(room, 1, sender=world.navi.user_id)  # the approval asked
        stop = await world.ana.send(room, "!stop")
        stopped = (await world.ana.messages(room, 2, sender=world.navi.user_id))[1]
        assert stopped["content"]["body"] == "Stopped."
        assert stopped["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": stop}}
        [session] = await world.rt.sessions.list(owner="ana")
        await world.services.runs.controls.wait(session.id, 10)
        assert world.services.runs.slots.get(session.id) is None
        assert not marker.exists()
    finally:
        await world.stop()


async def test_a_voice_message_is_transcribed_and_answered_with_a_voice_message(
    tmp_path: Path, synapse: Synapse
) -> None:
    from navi.voice.audio import decode
    from tests.helpers.speech import espeak_wav, in_container, words

    world = await start_world(tmp_path, synapse, navi_matrix_voice_replies=True)
    try:
        world.script.turn("The lights in the kitchen are off now.")
        room = await world.room_with_navi()
        # (eSpeak NG's "Turn off the lights in the kitchen." is heard as "the light simplication" or
        # "the light, simply kitchen" depending on Whisper's window: a sentence its voice says clearly)
        clip = in_container(espeak_wav("Switch off the lights in the kitchen please."), "ogg")
        mxc = await world.ana.upload("voice-message.ogg", clip, "audio/ogg")
        info = {"mimetype": "audio/ogg", "size": len(clip), "duration": 2500}
        asked = await world.ana.send(room, "voice-message.ogg", msgtype="m.audio", url=mxc, info=info)
        answer, spoken = await world.ana.messages(room, 2, sender=world.navi.user_id)
        assert answer["content"]["body"] == "The lights in the kitchen are off now."
        heard = world.turns()[0].last_user_text
        assert {"switch", "off", "lights", "kitchen"} <= set(words(heard)), heard
        assert spoken["content"]["msgtype"] == "m.audio"
        assert spoken["content"]["info"]["mimetype"] == "audio/ogg"
        assert spoken["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
        assert decode(await world.ana.download(spoken["content"]["url"])).seconds > 1.5
    finally:
        await world.stop()
