"""What of an answer is read aloud, and in which pieces (navi/voice/speakable.py): markdown, code
and addresses are not read; sentences come out while the answer streams."""

from __future__ import annotations

from navi.voice.speakable import Sentences, speakable, split_sentences


# --- what is read aloud --------------------------------------------------------------------------
def test_markdown_code_and_urls_are_not_read() -> None:
    said = speakable(
        "## Steps\n1. Open **the** [settings page](https://navi.example/settings).\n"
        "2. Run `navi serve`:\n\n```bash\nnavi serve --port 8000\n```\n"
        "See https://docs.example.org/x?y=1 for _more_."
    )
    assert "Steps." in said and "Open the settings page." in said
    for unread in ("https", "navi.example", "--port", "```", "**", "`", "#", "docs.example", "_more_"):
        assert unread not in said, unread
    assert "for more." in said


def test_sentences_come_out_while_the_answer_streams() -> None:
    answer = "Sure, Dr. Smith. The meeting is at noon! Bring the slides, e.g. the new ones? Done"
    found = Sentences()
    heard: list[tuple[int, str]] = []
    for i in range(0, len(answer), 5):
        heard += [(i, s) for s in found.feed(answer[i : i + 5])]
    heard += [(len(answer), s) for s in found.finish()]
    assert [s for _, s in heard] == [
        "Sure, Dr. Smith.",
        "The meeting is at noon!",
        "Bring the slides, e.g. the new ones?",
        "Done.",
    ]
    assert heard[0][0] < len(answer) // 2  # the first sentence was ready long before the end


def test_a_code_block_holds_back_nothing_is_read_from_it() -> None:
    found = Sentences()
    assert found.feed("Here it is.\n```python\nprint('x. y. z.') ") == []  # the fence is open
    rest = found.feed("\n```\nThat prints it. ") + found.finish()
    assert rest == ["Here it is.", "That prints it."]
    assert split_sentences("One. Two!") == ["One.", "Two!"]


def _streamed(text: str, step: int = 4) -> list[tuple[int, str]]:
    """(characters streamed when it came out, piece) for `text` fed `step` characters at a time."""
    found = Sentences(first_clause=True)
    out = []
    for i in range(0, len(text), step):
        out += [(i + step, piece) for piece in found.feed(text[i : i + step])]
    return out + [(len(text), piece) for piece in found.finish()]


def test_the_first_clause_of_an_answer_comes_out_before_its_sentence_ends() -> None:
    text = "Based on the forecast for Paris, expect a sunny afternoon. Take a hat, it is bright."
    got = _streamed(text)
    # the clause as soon as its comma and a space have streamed, read as a pause (its comma kept)
    assert got[0] == (36, "Based on the forecast for Paris,")
    assert [piece for _, piece in got] == [
        "Based on the forecast for Paris,",
        "expect a sunny afternoon.",
        "Take a hat, it is bright.",  # only the first sentence is cut
    ]
    assert split_sentences(text) == [
        "Based on the forecast for Paris, expect a sunny afternoon.",
        "Take a hat, it is bright.",
    ]


def test_no_clause_is_cut_where_it_would_hurt() -> None:
    for text in (
        "Sure, the train leaves at seven. More.",  # a clause under four words: not worth a piece
        "Use `f(a, b)` for it, and then call it twice. More.",  # inline code before the comma
        "See [the forecast, in full](https://x.example/a,b) for details, then decide. More.",
        "## The plan for today, in short\n\nFirst this. More.",  # a heading
        "- one item here, and another\n- second. More.",  # a list
        "The first train to Berlin leaves at seven fifteen tomorrow morning. Then, later, more.",
    ):
        pieces = [piece for _, piece in _streamed(text)]
        assert pieces == split_sentences(text), (text, pieces)


def test_hostile_text_is_read_in_linear_time_and_nothing_breaks() -> None:
    """Thousands of brackets, stars, fences or blank lines: the regular expressions are bounded (a
    quadratic one took 13 s on 20 kB of "**a "); the test run's timeout catches a regression."""
    for hostile in (
        "**a " * 5000,
        "[" * 10000 + "](",
        "\n```\n" * 3000,
        "\n" * 50000,
        ". " * 30000,
        "<a" * 10000,
    ):
        said = speakable(hostile)
        assert "```" not in said and "**" not in said
        found = Sentences()
        for i in range(0, len(hostile), 4000):
            found.feed(hostile[i : i + 4000])
        found.finish()
    assert split_sentences("[" * 5000 + "Fine. Done.")[-1] == "Done."


def test_a_remote_engine_needs_its_server() -> None:
    import pytest

    from navi.compose.problems import SetupError
    from navi.compose.voice import build_voice
    from navi.config import SettingsError, load_settings

    with pytest.raises(SetupError, match="VOICE_STT_URL"):
        build_voice(load_settings(voice_stt="remote"))
    with pytest.raises(SetupError, match="VOICE_TTS_URL"):
        build_voice(load_settings(voice_tts="remote", voice_tts_url=""))
    with pytest.raises(SettingsError, match="VOICE_STT_URL"):
        load_settings(voice_stt="remote", voice_stt_url="ftp://host/v1")
