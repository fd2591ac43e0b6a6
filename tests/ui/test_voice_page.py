"""Voice on the page, in Chromium with a fake microphone fed from a generated speech file
(`--use-file-for-fake-audio-capture`): the transcript arrives in the message box, answers are read
aloud sentence by sentence while they stream (the first sentence's audio asked for before the stream
ends, code and addresses never sent to be spoken), hands-free talk with barge-in, and a clear message
where the microphone is not allowed.

The file is a spoken question followed by silence; Chromium plays it in a loop as the microphone
(from its start each time the page opens the microphone). One Navi for the module: Whisper and
Piper load once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, Playwright, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from navi.voice.audio import wav_bytes
from tests.helpers.speech import espeak_wav, samples_of, wer, words
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.ui.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, Watched, open_app, open_context

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "What is the weather in Paris today?"
ANSWER = (
    "The weather in Paris is sunny and mild. Expect a light breeze in the afternoon. "
    "Here is how to check it yourself:\n\n```bash\ncurl https://wttr.in/Paris\n```\n\n"
    "The forecast is at https://meteo.example/paris if you want the details. Have a lovely day!"
)


@pytest.fixture(scope="module")
def microphone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The question, then three seconds of silence (a pause for hands-free to notice)."""
    samples, rate = samples_of(espeak_wav(QUESTION, speed=150))
    padded = np.concatenate([np.zeros(rate // 2, np.float32), samples * 0.9, np.zeros(rate * 3, np.float32)])
    path = tmp_path_factory.mktemp("mic") / "question.wav"
    path.write_bytes(wav_bytes(padded, rate))
    return path


@pytest.fixture(scope="module")
def browser(playwright: Playwright, microphone: Path) -> Iterator[Browser]:
    args = [
        *CHROMIUM_ARGS,
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={microphone}",
        "--autoplay-policy=no-user-gesture-required",
    ]
    instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def navi(
    tmp_path_factory: pytest.TempPathFactory, fake_server_session: FakeModelServer
) -> Iterator[LiveNavi]:
    with live_navi(tmp_path_factory.mktemp("voice-page"), fake_server_session) as server:
        yield server


@pytest.fixture
def page(browser: Browser, navi: LiveNavi) -> Iterator[Page]:
    context, watched = open_context(browser, navi, permissions=["microphone"])
    page = context.new_page()
    yield page
    context.close()
    _clean(watched)


def wait_attr(page: Page, selector: str, name: str, ok: Any, within: float = 60.0) -> str:
    """Poll an attribute until `ok(value)` (the page's policy allows no evaluated strings)."""
    deadline = time.monotonic() + within
    value = None
    while time.monotonic() < deadline:
        value = page.locator(selector).get_attribute(name)
        if value is not None and ok(value):
            return value
        page.wait_for_timeout(50)
    toast = page.locator("#toast").text_content()
    raise AssertionError(f"{selector}[{name}] is {value!r} after {within} s (toast: {toast!r})")


def _clean(watched: Watched) -> None:
    assert watched.foreign == [], f"the page contacted other hosts: {watched.foreign}"
    assert watched.errors == [], f"the page threw: {watched.errors}"


class Timeline:
    """The page's voice traffic in the order it happened: the `voice` and `speak` frames it sent, the
    `speech` frames (a sentence each) and answer frames it got, and any /v1/audio request."""

    def __init__(self, page: Page, first_speech: threading.Event | None = None) -> None:
        self.events: list[tuple[str, str]] = []
        self.audio_requests: list[str] = []
        self.said: list[str] = []  # sentences asked of /v1/audio/speech (the speaker button)
        self.first_speech = first_speech
        page.on("request", self._request)
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", self._frame)
        ws.on("framesent", self._sent)

    def _request(self, request: Any) -> None:
        if "/v1/audio/" in request.url:
            self.audio_requests.append(request.url)
            if request.url.endswith("/v1/audio/speech"):
                self.said.append(str(request.post_data_json["input"]))

    @staticmethod
    def _json(payload: str | bytes) -> dict[str, Any]:
        frame = json.loads(payload if isinstance(payload, str) else payload.decode())
        return frame if isinstance(frame, dict) else {}

    def _sent(self, payload: str | bytes) -> None:
        frame = self._json(payload)
        if frame.get("type") in ("voice", "speak"):
            self.events.append(("sent", f"{frame['type']}{'' if frame.get('on', True) else ' off'}"))

    def _frame(self, payload: str | bytes) -> None:
        frame = self._json(payload)
        kind = frame.get("type")
        if kind == "speech":
            self.events.append(("speak", str(frame["text"])))
            if self.first_speech is not None:
                self.first_speech.set()
        elif kind == "speech_end":
            self.events.append(("speech_end", str(frame["reason"])))
        elif kind in ("stream_start", "stream_end", "stream_stopped", "transcript"):
            self.events.append(("frame", str(kind)))

    def spoken(self) -> list[str]:
        return [text for kind, text in self.events if kind == "speak"]

    def index(self, event: tuple[str, str]) -> int:
        return self.events.index(event)


def test_a_tap_records_and_the_transcript_lands_in_the_box(page: Page) -> None:
    timeline = Timeline(page)
    open_app(page)
    mic = page.locator("#mic")
    mic.click()  # a tap: recording goes on until the next tap
    expect(mic).to_have_attribute("aria-pressed", "true")
    wait_attr(page, "#mic-level", "data-level", lambda v: float(v) > 0.02, 10)
    time.sleep(3.5)  # the question plays into the fake microphone
    mic.click()
    expect(mic).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#input")).to_have_value(_containing("paris"), timeout=60_000)
    heard = set(words(page.locator("#input").input_value()))
    assert {"paris", "today"} <= heard and wer(QUESTION, page.locator("#input").input_value()) <= 0.4, heard
    # the clip went over the conversation's socket (a draft became one), its words came back on it
    assert ("sent", "voice") in timeline.events and ("frame", "transcript") in timeline.events
    assert timeline.audio_requests == []
    assert ("frame", "stream_start") not in timeline.events  # only transcribed: nothing was sent


def _containing(word: str) -> Any:
    import re

    return re.compile(rf"\b{word}\b", re.IGNORECASE)


def test_answers_are_read_aloud_sentence_by_sentence_while_they_stream(
    page: Page, fake_server: FakeModelServer
) -> None:
    held = threading.Event()  # the answer stops in its second sentence until the first was spoken
    use_script(fake_server).turn(Reply(text=ANSWER, chunk_chars=6, delay=0.05, hold=held, wait_after=8))
    timeline = Timeline(page, first_speech=held)
    open_app(page)
    page.locator("#answer-aloud").click()
    expect(page.locator("#answer-aloud")).to_have_attribute("aria-pressed", "true")
    page.locator("#input").fill("How is the weather?")
    page.locator("#input").press("Enter")
    expect(page.locator("article.msg.turn .speak-answer")).to_have_count(1, timeout=60_000)
    wait_attr(page, "#voice-player", "data-played", lambda v: int(v) >= 2)
    expect(page.locator("#voice-player")).to_have_attribute(
        "data-sentence", "Have a lovely day!", timeout=60_000
    )
    spoken = timeline.spoken()
    assert spoken == [
        "The weather in Paris is sunny and mild.",
        "Expect a light breeze in the afternoon.",
        "Here is how to check it yourself:",
        "The forecast is at if you want the details.",
        "Have a lovely day!",
    ]
    said = " ".join(spoken)
    assert "curl" not in said and "wttr" not in said and "meteo.example" not in said and "https" not in said
    # Navi spoke the first sentence on the socket while the answer was still streaming
    assert timeline.index(("speak", spoken[0])) < timeline.index(("frame", "stream_end")), timeline.events
    assert ("speech_end", "done") in timeline.events
    assert timeline.audio_requests == []  # nothing went through /v1/audio
    # the choice belongs to this conversation: it is still on after a reload
    page.reload()
    expect(page.locator("#answer-aloud")).to_have_attribute("aria-pressed", "true")


def test_answer_aloud_switched_on_mid_answer_reads_from_the_streaming_sentence(
    page: Page, fake_server: FakeModelServer
) -> None:
    held = threading.Event()  # the answer waits inside its second sentence ("… mild. Expect a")
    use_script(fake_server).turn(Reply(text=ANSWER, chunk_chars=6, delay=0.12, hold=held, wait_after=8))
    timeline = Timeline(page)
    open_app(page)
    page.locator("#input").fill("How is the weather?")
    page.locator("#input").press("Enter")
    expect(page.locator("article.msg.turn")).to_contain_text("mild. Expect a", timeout=60_000)
    page.locator("#answer-aloud").click()
    deadline = time.monotonic() + 15
    while ("sent", "speak") not in timeline.events and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    page.wait_for_timeout(300)  # Navi reads the frame at once; the rest of the sentence takes 0.6 s more
    held.set()
    wait_attr(page, "#voice-player", "data-played", lambda v: int(v) >= 1)
    expect(page.locator("#voice-player")).to_have_attribute(
        "data-sentence", "Have a lovely day!", timeout=60_000
    )
    spoken = timeline.spoken()
    assert spoken[0] == "Expect a light breeze in the afternoon.", timeline.events  # not from the start
    assert "The weather in Paris is sunny and mild." not in spoken
    assert spoken[-1] == "Have a lovely day!" and timeline.audio_requests == []


def test_the_speaker_button_reads_one_answer(page: Page, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn(Reply(text="Your train leaves at noon. Platform four.\n\n`ignored()`"))
    timeline = Timeline(page)
    open_app(page)
    page.locator("#input").fill("When is my train?")
    page.locator("#input").press("Enter")
    button = page.locator("article.msg.turn .speak-answer")
    expect(button).to_have_count(1, timeout=60_000)
    assert timeline.spoken() == timeline.said == []  # not read aloud unless asked
    button.click()
    wait_attr(page, "#voice-player", "data-played", lambda v: int(v) >= 1)
    # a finished answer is read through /v1/audio/speech, a sentence a request
    assert timeline.said == ["Your train leaves at noon.", "Platform four."]


# The person says nothing for a while: the file-fed microphone's sound passes through a gain the
# test turns down and up again (the page gets the same kind of audio track, from the same file).
# The looping file alone would speak again whenever its loop comes round, on a loaded machine
# before the answer's first sentence had even been synthesised: a barge-in before anything played.
MUTE_SWITCH = """
(() => {
  const devices = navigator.mediaDevices;
  const open = devices.getUserMedia.bind(devices);
  const gains = [];
  window.fakeMic = { on: true };
  window.fakeMic.set = (on) => {
    window.fakeMic.on = on;
    for (const gain of gains) gain.gain.value = on ? 1 : 0;
  };
  devices.getUserMedia = async (constraints) => {
    const stream = await open(constraints);
    const context = new AudioContext();
    const gain = context.createGain();
    gain.gain.value = window.fakeMic.on ? 1 : 0;
    const out = context.createMediaStreamDestination();
    context.createMediaStreamSource(stream).connect(gain);
    gain.connect(out);
    gains.push(gain);
    return out.stream;
  };
})();
"""


def test_hands_free_talk_and_barge_in(page: Page, fake_server: FakeModelServer) -> None:
    # twelve sentences, ~40 s of speech: still playing when the question comes again
    long_answer = " ".join(
        f"Point number {n} about the weather in Paris is worth hearing." for n in range(1, 13)
    )
    script = use_script(fake_server)
    script.turn(Reply(text=long_answer, chunk_chars=20, delay=0.02))
    script.turn(Reply(text="Yes."))  # the question heard again after the barge-in is sent too
    timeline = Timeline(page)
    page.add_init_script(MUTE_SWITCH)
    open_app(page)
    mic = page.locator("#mic")
    page.locator("#hands-free").click()
    # the question is heard, the pause ends it, it is transcribed and sent by itself
    expect(mic).to_have_attribute("aria-pressed", "true", timeout=30_000)
    expect(mic).to_have_attribute("aria-pressed", "false", timeout=30_000)
    page.evaluate("window.fakeMic.set(false)")  # while it is transcribed (a Whisper run): quiet
    expect(page.locator("article.msg.user, .msg.user").first).to_contain_text("Paris", timeout=60_000)
    wait_attr(page, "#voice-player", "data-played", lambda v: int(v) >= 1, 120)
    assert page.locator("#voice-player").get_attribute("data-stopped") is None  # nothing stopped it
    # the person speaks while the answer plays: playback stops, listening starts
    page.evaluate("window.fakeMic.set(true)")
    wait_attr(page, "#voice-player", "data-stopped", lambda v: v == "barge-in", 30)
    expect(mic).to_have_attribute("aria-pressed", "true")
    assert len(timeline.spoken()) >= 1
    # the clip went as a `voice` frame, the answer came as `speech` frames, and the barge-in told
    # Navi to stop (`speak` again): it ended that answer's speech
    assert timeline.events[:2] == [("sent", "speak"), ("sent", "voice")], timeline.events
    assert timeline.events.count(("sent", "speak")) >= 2
    deadline = time.monotonic() + 30
    while ("speech_end", "stopped") not in timeline.events and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert ("speech_end", "stopped") in timeline.events, timeline.events
    assert timeline.audio_requests == []
    played = int(page.locator("#voice-player").get_attribute("data-played") or "0")
    assert played < len(long_answer.split(". ")), "the whole answer played: nothing barged in"
    page.locator("#hands-free").click()


def test_without_microphone_permission_the_page_says_what_to_do(browser: Browser, navi: LiveNavi) -> None:
    context, watched = open_context(browser, navi)  # no permission granted
    page = context.new_page()
    open_app(page)
    page.locator("#mic").click()
    expect(page.locator("#voice-status")).to_contain_text("allow the microphone", timeout=15_000)
    expect(page.locator("#mic")).to_have_attribute("data-denied", "true")
    context.close()
    _clean(watched)


def test_space_held_in_an_empty_box_talks(page: Page) -> None:
    open_app(page)
    box = page.locator("#input")
    box.focus()
    page.keyboard.down(" ")
    expect(page.locator("#mic")).to_have_attribute("aria-pressed", "true")
    time.sleep(3.5)
    page.keyboard.up(" ")
    expect(box).to_have_value(_containing("paris"), timeout=60_000)
    assert not box.input_value().startswith(" ")  # the held Space typed nothing


def test_the_phone_layout_has_the_microphone(browser: Browser, navi: LiveNavi) -> None:
    context, watched = open_context(
        browser, navi, viewport=PHONE, is_mobile=True, has_touch=True, permissions=["microphone"]
    )
    page = context.new_page()
    open_app(page)
    mic = page.locator("#mic")
    expect(mic).to_be_visible()
    box = mic.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    expect(page.locator("#send")).to_be_in_viewport()
    mic.tap()
    expect(mic).to_have_attribute("aria-pressed", "true")
    mic.tap()
    expect(mic).to_have_attribute("aria-pressed", "false")
    context.close()
    _clean(watched)
