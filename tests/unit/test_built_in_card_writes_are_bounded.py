"""No card can exhaust the store through a note, sticky, todo or taskboard (SPEC §8
"Bounds"), on SQLite and on PostgreSQL.

A built-in card's write (`cards.note.append`, `cards.sticky.write`, `cards.todo.add`,
`cards.taskboard.add`, and data on their input ports) is logged with its whole payload
(up to ``max_payload``, 256 KiB), saves the node's whole content and sends it on every
port arrow from the node. Such writes count in a rolling window of their own, the
``card-write`` key (60 in any 60 s, method and port counted together, as a prompt's
key is), in the same windows as SPEC §6's keys: shared by spawned copies, kept across
a restart, ``RATE_LIMITED`` with ``retry_after``. And a built-in card's content holds
at most ``content_max_bytes`` (a workspace setting, 1 MiB by default): a write that
would take it past is ``CARD_LIMIT``, reason ``content-size``, and changes nothing.

(Found in round 27: a card could append 256 KiB to a note as fast as it liked, each
append logged whole and the note growing without end.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, open_store

KIB = 1024


async def _canvas(engine: Engine, tmp_path: Path, settings: dict[str, Any] | None = None
                  ) -> None:
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings)
    await offer_install(engine, manifest("acme.writer", {"cards.connected": {},
                                                         "canvas.spawn": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.writer"},
                          workspace="w1")
    for kind in ("note", "sticky", "todo", "taskboard"):
        await engine.add_node({"id": kind, "type": kind}, workspace="w1")
        await engine.add_arrow({"id": f"c1-{kind}", "from": "c1", "to": kind})


async def test_built_in_card_writes_count_in_a_rolling_window(store: str,
                                                              tmp_path: Path) -> None:
    """60 writes in any 60 s, every kind and the input ports counted together; the 61st
    is RATE_LIMITED with retry_after, a spawned copy shares the window, a restart keeps it."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    await _canvas(engine, tmp_path)
    await engine.add_arrow({"id": "c1-note-port", "from": "c1", "from_port": "out",
                            "to": "note", "to_port": "append"})
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    await engine.add_arrow({"id": "copy-note", "from": copy, "to": "note"})
    # GIVEN 59 writes of every kind within one second, and one through the note's port
    writes = [("cards.note.append", "note"), ("cards.sticky.write", "sticky"),
              ("cards.todo.add", "todo"), ("cards.taskboard.add", "taskboard")]
    for i in range(59):
        call, target = writes[i % 4]
        d = await engine.call("c1", call, target, {"text": f"line {i}"})
        assert d.outcome == "ok", d.message
    sent = await engine.emit("c1", "out", "through the port")
    assert sent["c1-note-port"].outcome == "ok"
    # WHEN the card, or its copy, writes once more in the same minute
    for card in ("c1", copy):
        refused = await engine.call(card, "cards.note.append", "note", {"text": "more"})
        # THEN it is refused, saying when it may write again
        assert (refused.outcome, refused.code, refused.reason) == (
            "rate-limited", "RATE_LIMITED", "card-write")
        assert refused.retry_after is not None and 59 < refused.retry_after <= 60
    assert (await engine.emit("c1", "out", "x"))["c1-note-port"].code == "RATE_LIMITED"
    engine.close()
    # ... and after a restart
    clock.t += 30
    again = open_store(store, clock=clock)
    try:
        refused = await again.call("c1", "cards.todo.add", "todo", {"text": "after"})
        assert refused.code == "RATE_LIMITED" and refused.reason == "card-write"
        assert refused.retry_after is not None and 29 < refused.retry_after <= 30
        clock.t += 31
        assert (await again.call("c1", "cards.todo.add", "todo", {"text": "later"})
                ).outcome == "ok"
    finally:
        again.close()


async def test_a_note_holds_at_most_content_max_bytes(store: str, tmp_path: Path) -> None:
    """Appends of 256 KiB, one a minute apart: the note stops at 1 MiB (the default), the
    append past it CARD_LIMIT content-size, logged, the note as it was."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        await _canvas(engine, tmp_path)
        outcomes = []
        for i in range(6):
            d = await engine.call("c1", "cards.note.append", "note",
                                  {"text": chr(ord("a") + i) * (256 * KIB)})
            outcomes.append((d.outcome, d.code, d.reason))
            clock.t += 61
        # Three fit (3 × 256 KiB and two newlines); a fourth would be 1 MiB and 3 bytes.
        assert outcomes == [("ok", None, None)] * 3 + [
            ("denied", "CARD_LIMIT", "content-size")] * 3
        text = engine.state.canvas.node("note").data["text"]  # type: ignore[union-attr]
        assert len(text.encode()) == 3 * 256 * KIB + 2
        assert "content_max_bytes" in d.message and str(1024 * KIB) in d.message
        rows = engine.log_rows(arrow="c1-note")
        assert [r["outcome"] for r in rows] == ["ok"] * 3 + ["denied"] * 3
        assert all(len(str(r["payload"]).encode()) <= 4 * KIB for r in rows[3:])
    finally:
        engine.close()


async def test_every_built_in_card_is_bounded_by_the_setting(store: str,
                                                             tmp_path: Path) -> None:
    """A workspace's content_max_bytes bounds a sticky's text and a todo's or taskboard's
    list as JSON, as it does a note's; through the input port too."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        await _canvas(engine, tmp_path, {"content_max_bytes": 2000, "max_payload": 1500})
        await engine.add_arrow({"id": "c1-todo-port", "from": "c1", "from_port": "out",
                                "to": "todo", "to_port": "add"})
        assert engine.state.workspaces["w1"].settings.content_max_bytes == 2000
        # A sticky's text is replaced: what counts is the text after the write.
        assert (await engine.call("c1", "cards.sticky.write", "sticky",
                                  {"text": "s" * 1500})).outcome == "ok"
        assert (await engine.call("c1", "cards.sticky.write", "sticky",
                                  {"text": "t" * 1400})).outcome == "ok"
        for kind, call in (("note", "cards.note.append"), ("todo", "cards.todo.add"),
                           ("taskboard", "cards.taskboard.add")):
            assert (await engine.call("c1", call, kind, {"text": "x" * 900})).outcome == "ok"
            refused = await engine.call("c1", call, kind, {"text": "y" * 1200})
            assert (refused.code, refused.reason) == ("CARD_LIMIT", "content-size"), kind
            before = dict(engine.state.canvas.node(kind).data)  # type: ignore[union-attr]
            assert "y" * 1200 not in str(before)
        # The todo's list (one item of 900, about 950 as JSON) has no room for 1,100 more.
        sent = await engine.emit("c1", "out", "z" * 1100)
        assert (sent["c1-todo-port"].code, sent["c1-todo-port"].reason) == (
            "CARD_LIMIT", "content-size")
        assert len(engine.state.canvas.node("todo").data["items"]) == 1  # type: ignore[union-attr]
        # Something small still fits.
        assert (await engine.call("c1", "cards.todo.add", "todo", {"text": "ok"})
                ).outcome == "ok"
    finally:
        engine.close()


def test_content_max_bytes_is_a_checked_setting() -> None:
    """The setting has the spec's kind of range: a whole number from 1 byte to 1 GiB."""
    from canvas.model import InvalidSetting, WorkspaceSettings
    assert WorkspaceSettings().content_max_bytes == 1024 * KIB
    assert WorkspaceSettings.from_dict({"content_max_bytes": 5}).content_max_bytes == 5
    for bad in (0, -1, 1.5, True, 1 << 31):
        with pytest.raises(InvalidSetting, match="content_max_bytes"):
            WorkspaceSettings.from_dict({"content_max_bytes": bad})


async def test_the_window_counts_what_the_workspace_sets(store: str, tmp_path: Path) -> None:
    """card_write_limit sets the window's count (its period stays 60 s), and the refusal
    says that count."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        await _canvas(engine, tmp_path, {"card_write_limit": 3})
        for i in range(3):
            assert (await engine.call("c1", "cards.todo.add", "todo", {"text": str(i)})
                    ).outcome == "ok"
        refused = await engine.call("c1", "cards.todo.add", "todo", {"text": "4"})
        assert (refused.code, refused.reason) == ("RATE_LIMITED", "card-write")
        assert "at most 3 card-write calls in any 60 s" in refused.message
        # Told on the clock while time stands still (the clock stepped back), the same count.
        clock.t -= 100
        refused = await engine.call("c1", "cards.todo.add", "todo", {"text": "4"})
        assert "at most 3 card-write calls" in refused.message
        assert "stands still" in refused.message
        clock.t += 100
        await engine.set_settings("w1", {"card_write_limit": 5})
        assert (await engine.call("c1", "cards.todo.add", "todo", {"text": "5"})
                ).outcome == "ok"
    finally:
        engine.close()
