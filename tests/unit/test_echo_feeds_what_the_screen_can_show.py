"""A prompt echoed on an agent's screen feeds the emulator no more than the screen can show.

Rule: `Screen.echo` shows a prompt as typed; a prompt longer than the screen holds
(the lines above the cursor's) is shown by its end, after ``> …``, and only that end
is fed to the emulator. A prompt that fits is echoed whole, as before.

(Found in round 21: a whole prompt was fed to pyte on the engine's loop — a
256 KiB prompt, the default ``max_payload``, held the loop about 0.3 s for a
screen that shows 3,000 characters of it.)
"""

from __future__ import annotations

import pytest

from engine.effects.drivers.screen import Screen


def _fed(screen: Screen, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    fed: list[bytes] = []
    real = screen._stream.feed

    def counting(data: bytes) -> None:
        fed.append(data)
        real(data)

    monkeypatch.setattr(screen._stream, "feed", counting)
    return fed


def test_a_long_prompt_feeds_only_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Screen(40, 10, newline_returns=True)
    fed = _fed(screen, monkeypatch)
    prompt = "".join(f"{i:07d} " for i in range(100_000))  # 800,000 characters
    screen.echo(prompt)
    assert sum(len(d) for d in fed) <= 40 * 10 * 4 + 16, "more fed than the screen shows"
    # (Lines are read back without their trailing blanks: compared without spaces.)
    shown = screen.text().replace("\n", "").replace(" ", "")
    assert shown.endswith(prompt[-300:].replace(" ", "")), shown[-80:]
    assert screen.text().startswith("> …"), screen.text()[:80]


def test_a_prompt_that_fits_is_echoed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Screen(40, 10, newline_returns=True)
    screen.echo("make the tests pass\x1b[2J")
    assert screen.text() == "> make the tests pass␛[2J"


def test_a_long_non_ascii_prompt_is_cut_by_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Screen(40, 10, newline_returns=True)
    fed = _fed(screen, monkeypatch)
    screen.echo("é\u202e" * 200_000)
    assert sum(len(d) for d in fed) <= 40 * 10 * 4 * 4 + 16
