"""A keymap never makes consent easier to give by accident than the default keys.

A key that gives consent in a dialog (``confirm.yes``, ``review.accept``,
``hold.confirm_approve``, ``request.allow`` and their high-risk keys) is never a key that
moves, scrolls or closes (arrows, pages, home/end, space, enter, tab, escape, a pager's
j/k/h/l/g/G), never the key of another binding a person may press just before it or
with it (the key that opened the dialog, its no, its end key, quit), and a high-risk
yes stays a deliberate chord (an upper-case letter or a modifier). A keymap that breaks
this is refused whole, naming the line of the file and the binding.

(Found by helper tui25: ``{"hold.confirm_approve": "enter"}`` sent a held prompt to an
agent in dangerous mode on the enter a person presses to say OK, and
``{"confirm.yes": "down"}`` confirmed a dialog whose text fits on the first arrow
press, as the scroll view passes a key it cannot scroll with to the dialog.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.binding import Binding

from engine.app.replay import VirtualClock

from .conftest import open_hold, settle
from .world import add_hostile, make_app


@pytest.mark.parametrize(("binding", "key"), [
    ("hold.confirm_approve", "enter"),
    ("hold.confirm_approve", "ctrl+m"),  # enter, as a terminal sends it
    ("confirm.yes", "down"),
    ("confirm.yes", "j"),
    ("confirm.deliberate", "pagedown"),
    ("review.accept", "space"),
    ("review.accept_high", "escape"),
    ("request.allow", "tab"),
    ("request.allow_high", "shift+down"),
])
def test_a_consent_key_on_a_navigation_key_is_refused(tui_db: Path, tui_clock: VirtualClock,
                                                      binding: str, key: str) -> None:
    """A yes on a key that moves, scrolls or closes: the keymap is refused, naming both."""
    with pytest.raises(ValueError, match=rf'"{binding}"') as caught:
        make_app(tui_db, tui_clock, keymap={binding: key})
    assert "moves" in str(caught.value), caught.value


@pytest.mark.parametrize(("keymap", "other"), [
    ({"hold.confirm_approve": "A", "hold.approve": "A"}, "hold.approve"),  # held down: opens, then approves
    ({"confirm.yes": "g"}, "grant.grant"),  # the key that opens a grant's dialog
    ({"confirm.yes": "n"}, "confirm.no"),  # two answers on one key
    ({"confirm.end": "y"}, "confirm.end"),  # the end key a reader presses on the yes
    ({"review.accept": "q"}, "app.quit_q"),
    ({"request.allow": "y,4"}, "screen.grants"),
])
def test_a_consent_key_shared_with_another_binding_is_refused(
        tui_db: Path, tui_clock: VirtualClock, keymap: dict[str, str], other: str) -> None:
    """A yes on the key of another binding in reach: refused, naming the other binding."""
    with pytest.raises(ValueError, match=other.replace(".", r"\.")):
        make_app(tui_db, tui_clock, keymap=keymap)


@pytest.mark.parametrize(("binding", "key"), [
    ("confirm.deliberate", "x"), ("hold.confirm_approve", "b"), ("review.accept_high", "f5"),
    ("request.allow_high", "exclamation_mark"),
])
def test_a_high_risk_yes_stays_a_deliberate_chord(tui_db: Path, tui_clock: VirtualClock,
                                                  binding: str, key: str) -> None:
    """The high-risk yes on a plain key is refused: it would be as easy as any yes."""
    with pytest.raises(ValueError, match="deliberate"):
        make_app(tui_db, tui_clock, keymap={binding: key})


async def test_a_careful_keymap_is_taken(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Consent moved to other free keys, deliberate ones kept chords: the app takes it and
    the moved key works, once the text was seen."""
    held = await add_hostile(tui_db, tui_clock, text="Short and sweet.")
    app = make_app(tui_db, tui_clock, start="holds", keymap={
        "hold.confirm_approve": "ctrl+a", "confirm.yes": "z", "confirm.deliberate": "Z",
        "hold.approve": "A", "grant.revoke": "ctrl+r"})
    async with app.run_test(size=(120, 40)) as pilot:
        await open_hold(pilot, held, key="A")
        await pilot.press("ctrl+a")
        await settle(pilot)
        prompt = app.engine.prompt(held)
        assert prompt is not None and prompt.state != "held", prompt


async def test_a_keymap_set_while_running_is_checked(tui_db: Path,
                                                     tui_clock: VirtualClock) -> None:
    """``set_keymap`` on a running app refuses a breaking keymap and keeps the one it had."""
    app = make_app(tui_db, tui_clock, start="holds", keymap={"hold.approve": "A"})
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        with pytest.raises(ValueError, match="hold.confirm_approve"):
            app.set_keymap({"hold.confirm_approve": "enter"})
        assert app.keys_for(Binding("Y", "approve", id="hold.confirm_approve")) == "Y"
        assert app.keys_for(Binding("a", "approve", id="hold.approve")) == "A"


def _read_keymap(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "keymap.json"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "ARROWGATE_KEYMAP": str(path),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-c", "from tui.cli import _keymap; _keymap()"],
                          env=env, capture_output=True, text=True, timeout=60)


def test_the_refusal_names_the_line_of_the_file(tmp_path: Path) -> None:
    """The keymap file that breaks the rule: one message naming the file, line and binding."""
    done = _read_keymap(tmp_path, '{\n  "hold.approve": "A",\n  "hold.confirm_approve": '
                                  '"enter"\n}\n')
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "keymap.json" in done.stderr and "line 3" in done.stderr, done.stderr
    assert '"hold.confirm_approve": "enter"' in done.stderr, done.stderr


def test_a_binding_given_twice_in_the_file_is_refused(tmp_path: Path) -> None:
    """A binding id twice in the file: the second would silently win over the line read
    first, so it is refused, naming both lines."""
    done = _read_keymap(tmp_path, '{\n  "confirm.yes": "z",\n  "grant.revoke": "ctrl+r",\n'
                                  '  "confirm.yes": "o"\n}\n')
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "confirm.yes" in done.stderr and "line 2" in done.stderr \
        and "line 4" in done.stderr, done.stderr
