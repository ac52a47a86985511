"""The one filter for what is shown: escape sequences out, also when a stream splits them."""

from __future__ import annotations

import pytest

from ga.tooling.screen import CleanStream, clean

HOSTILE = [
    "title \x1b]0;PWNED\x07 after",
    "clipboard \x1b]52;c;cm0gLXJmIH4=\x1b\\ after",
    "clear \x1b[2J\x1b[H home \x1b[8mhidden\x1b[0m \x1b[31mred",
    "dcs \x1bP1$r\x1b\\ and 8-bit csi \x9b2J and bell \x07 and bidi \u202eevil\u202c and a lone \ud83d",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_nothing_that_drives_a_terminal_is_left(text):
    shown = clean(text)
    assert not any(c in shown for c in "\x1b\x07\x9b\u202e\u202c\ud83d")
    assert shown.encode("utf-8")  # a UTF-8 terminal can be sent all of it


@pytest.mark.parametrize("text", HOSTILE)
def test_a_stream_split_anywhere_gives_the_same_text(text):
    for at in range(len(text) + 1):
        stream = CleanStream()
        assert stream.feed(text[:at]) + stream.feed(text[at:]) + stream.flush() == clean(text), at


def test_text_and_line_endings_survive():
    assert clean("a\tb\r\nc\rd [bold]x[/] :smile:") == "a\tb\nc\nd [bold]x[/] :smile:"
