"""Bounds on what a card sends (SPEC §8 "Bounds"): sizes, valid Unicode, plain data,
the refused row's shape and the refusal log limit; every call gets a logged Decision."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.decision import Decision
from engine.store.log import GENESIS, PAYLOAD_KEPT, clip_payload, row_hash

from ..conftest import manifest, offer_install

KIB = 1024


async def _rows(engine: Engine) -> list[dict[str, Any]]:
    return engine.log_rows()


async def test_an_oversized_argument_is_invalid_at_check_3(world: Engine) -> None:
    """More than max_payload bytes: INVALID_ARGUMENT naming the argument, before not-declared."""
    big = "x" * (256 * KIB + 1)
    # clipboard.write is declared but not granted: check 3 still comes first.
    d = await world.call("c1", "clipboard.copyText", None, {"text": big})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    assert "max_payload" in d.message
    # fs.read is not even declared.
    d = await world.call("c1", "fs.readText", None, {"path": big})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "path")
    d = await world.call("c1", "agents.prompt", "a1", {"text": big})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    assert world.prompts() == []
    rows = world.log_rows()
    assert [r["code"] for r in rows[-3:]] == ["INVALID_ARGUMENT"] * 3
    # Exactly max_payload is fine.
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "y" * 256 * KIB})).allowed


async def test_nested_strings_are_bounded_too(world: Engine) -> None:
    """A header value, a header name, and non-JSON or too deep data are INVALID_ARGUMENT."""
    url = "https://api.example.com/"
    for headers, words in (({"X-A": "v" * (256 * KIB + 1)}, "max_payload"),
                           ({"k" * (256 * KIB + 1): "v"}, "key"),
                           ({"X-A": "\udc80"}, "valid Unicode only"),
                           ({"X-A": {1, 2}}, "not JSON data"),
                           ({"X-A": math.nan}, "not finite"),
                           ({"X-A": 10 ** 30}, "out of range"),
                           ({"X-A": [[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]}, "deep"),
                           ({str(i): "v" for i in range(1001)}, "1000 values")):
        d = await world.call("c1", "net.fetch", None, {"url": url, "headers": headers})
        assert (d.code, d.reason) == ("INVALID_ARGUMENT", "headers"), headers
        assert words in d.message


async def test_max_payload_is_the_workspace_s_and_counts_utf8_bytes(world: Engine) -> None:
    """A smaller max_payload applies at once, to text with and without non-ASCII characters."""
    await world.set_settings("w1", {"max_payload": 100})
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "a" * 100})).allowed
    d = await world.call("c1", "agents.prompt", "a1", {"text": "a" * 101})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    d = await world.call("c1", "agents.prompt", "a1", {"text": "é" * 51})  # 102 bytes
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "é" * 50})).allowed
    await world.set_settings("w1", {"max_payload": 1000})
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "a" * 101})).allowed


@pytest.mark.parametrize("where", ["text", "target", "call", "card", "arg-name"])
async def test_a_lone_surrogate_anywhere_is_a_logged_refusal(world: Engine, where: str) -> None:
    """"\\ud800" in an argument, the target, the call name or the card: a Decision and a row."""
    card, call, target, args = "c1", "agents.prompt", "a1", {"text": "hi"}
    if where == "text":
        args = {"text": "hi \ud800"}
    elif where == "target":
        target = "a1\ud800"
    elif where == "call":
        call = "agents.prompt\ud800"
    elif where == "card":
        card = "c1\ud800"
    else:
        args = {"text": "hi", "\ud800": "x"}
    before = len(world.log_rows())
    d = await world.call(card, call, target, args)
    assert isinstance(d, Decision) and not d.allowed
    expected = {"card": ("CARD_UNKNOWN", None), "text": ("INVALID_ARGUMENT", "text"),
                "target": ("INVALID_ARGUMENT", "target"), "call": ("INVALID_ARGUMENT", "call"),
                "arg-name": ("INVALID_ARGUMENT", "\\ud800")}[where]
    assert (d.code, d.reason) == expected
    if where in ("text", "target", "call"):
        assert "valid Unicode only" in d.message
    rows = world.log_rows()
    assert len(rows) == before + 1
    json.dumps(d.to_json()).encode("utf-8")
    assert world.verify_log().ok


async def test_surrogate_clipboard_writes_are_refused_and_uncounted(world: Engine,
                                                                    clock: VirtualClock) -> None:
    """Six writes holding a surrogate in one second: all refused, none counted, all logged."""
    await world.grant("acme.prompter", "clipboard.write")
    for _ in range(6):
        d = await world.call("c1", "clipboard.copyText", None, {"text": "\ud800 pwned"})
        assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
        clock.t += 0.1
    assert world.world.clipboard_texts == []
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "ok"})).allowed
    d = await world.call("c1", "clipboard.copyText", None, {"text": "again"})
    assert d.code == "RATE_LIMITED"
    assert world.world.clipboard_texts == ["ok"]
    rows = [r for r in world.log_rows() if r["call"] == "clipboard.copyText"]
    assert len(rows) == 8 and rows[0]["payload"] == "\\xed\\xa0\\x80 pwned"
    raw = "\ud800 pwned".encode("utf-8", "surrogatepass")
    assert (rows[0]["payload_bytes"], rows[0]["payload_sha256"]) == (
        len(raw), hashlib.sha256(raw).hexdigest())


class _Weird:
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


@pytest.mark.parametrize("card, call, target, args, code, reason", [
    ("c1", "agents.prompt", ["a1"], {"text": "x"}, "INVALID_ARGUMENT", "target"),
    ("c1", "agents.prompt", {"a1": 1}, {"text": "x"}, "INVALID_ARGUMENT", "target"),
    ("c1", "agents.prompt", 7, {"text": "x"}, "INVALID_ARGUMENT", "target"),
    ("c1", ["agents.prompt"], "a1", {"text": "x"}, "INVALID_ARGUMENT", "call"),
    ("c1", None, "a1", {"text": "x"}, "INVALID_ARGUMENT", "call"),
    ("c1", _Weird(), "a1", {"text": "x"}, "INVALID_ARGUMENT", "call"),
    (None, "agents.prompt", "a1", {"text": "x"}, "CARD_UNKNOWN", None),
    (["c1"], "agents.prompt", "a1", {"text": "x"}, "CARD_UNKNOWN", None),
    ("c1", "agents.prompt", "a1", ["text", "x"], "INVALID_ARGUMENT", "args"),
    ("c1", "agents.prompt", "a1", "text", "INVALID_ARGUMENT", "args"),
    ("c1", "agents.prompt", "a1", {"text": None}, "INVALID_ARGUMENT", "text"),
    ("c1", "agents.prompt", "a1", {None: "x"}, "INVALID_ARGUMENT", "args"),
    ("c1", "agents.prompt", "a1", {"text": _Weird()}, "INVALID_ARGUMENT", "text"),
    ("c1", "no.such.call", None, None, "UNKNOWN_CALL", None),
    ("c1", "x" * 100_000, None, None, "UNKNOWN_CALL", None),
])
async def test_odd_values_give_clean_logged_decisions(world: Engine, card: Any, call: Any,
                                                      target: Any, args: Any, code: str,
                                                      reason: str | None) -> None:
    """Lists, dicts, None and lying objects where text belongs: a Decision and a row, no TypeError."""
    before = len(world.log_rows())
    d = await world.call(card, call, target, args)
    assert (d.code, d.reason) == (code, reason)
    json.dumps(d.to_json())
    rows = world.log_rows()
    assert len(rows) == before + 1 and rows[-1]["code"] == code
    assert all(len(str(rows[-1][k] or "")) <= 1100 for k in ("card", "call", "target", "reason"))


async def test_odd_contexts_ports_data_and_tools_are_clean_refusals(world: Engine) -> None:
    """Unhashable contexts and ports, non-JSON port data, odd tool names: Decisions, no TypeError."""
    d = await world.call("c1", "agents.prompt", "a1", {"text": "x"}, context=["k1"])  # type: ignore[arg-type]
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "context")
    out = await world.emit("c1", ["out"], "x")  # type: ignore[arg-type]
    assert (out[""].code, out[""].reason) == ("INVALID_ARGUMENT", "port")
    for data, words in (({1, 2}, "not JSON data"), (object(), "not JSON data"),
                        (math.inf, "not finite"), ("\ud800", "valid Unicode only"),
                        ("x" * (256 * KIB + 1), "max_payload"),
                        (["x" * 200 * KIB, "y" * 200 * KIB], "as JSON")):
        out = await world.emit("c1", "out", data)
        assert (out[""].code, out[""].reason) == ("INVALID_ARGUMENT", "data"), data
        assert words in out[""].message
    out = await world.emit(None, "out", "x")  # type: ignore[arg-type]
    assert out[""].code == "CARD_UNKNOWN"
    for tool in (["relay"], None, _Weird()):
        d = await world.tool("a1", "c1", tool)  # type: ignore[arg-type]
        assert d.code == "UNKNOWN_TOOL"
    d = await world.tool(["a1"], "c1", "relay")  # type: ignore[arg-type]
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "target")
    assert world.verify_log().ok


def test_clip_payload_keeps_4_kib_at_a_character_boundary() -> None:
    """Short text is kept as it is; long text is cut to whole characters, with length and hash."""
    assert clip_payload("hello") == ("hello", None, None)
    assert clip_payload("é" * 100) == ("é" * 100, None, None)
    text = "a" + "€" * 5000  # 3 bytes each: 4096 falls inside a character
    kept, size, digest = clip_payload(text)
    raw = text.encode()
    assert kept == "a" + "€" * 1365 and len(kept.encode()) == 4096
    assert (size, digest) == (len(raw), hashlib.sha256(raw).hexdigest())
    assert len(clip_payload("z" * 10**6)[0]) == PAYLOAD_KEPT


async def test_a_refused_row_keeps_4_kib_with_length_and_hash(world: Engine) -> None:
    """A refused 100 KiB prompt's row holds its first 4 KiB, full length and SHA-256; verify passes."""
    text = "p" * (100 * KIB)
    d = await world.call("c1", "agents.prompt", "t1", {"text": text})  # wrong-target
    assert d.reason == "wrong-target"
    row = world.log_rows()[-1]
    assert row["payload"] == text[:4096]
    assert row["payload_bytes"] == 100 * KIB
    assert row["payload_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    # An accepted prompt keeps its whole text and no digest.
    assert (await world.call("c1", "agents.prompt", "a1", {"text": text})).allowed
    row = world.log_rows()[-1]
    assert row["payload"] == text and row["payload_bytes"] is None
    assert world.verify_log().ok
    # The length and digest are under the hash: dropping them is a finding.
    seq = world.log_rows(outcome="denied")[-1]["seq"]
    world.db.execute("update log set payload_sha256 = null, payload_bytes = null where seq = ?",
                     [seq])
    world.db.conn.commit()
    result = world.verify_log()
    assert not result.ok and result.first_bad == seq


def test_rows_without_the_new_fields_hash_as_before() -> None:
    """A row written before payload_bytes existed has the hash it always had (old logs verify)."""
    row = {"seq": 1, "t": 1000.0, "workspace": "w1", "arrow": "e1", "card": "c1",
           "package": "acme.p", "version": "ab", "call": "agents.prompt", "target": "a1",
           "payload": "héllo", "chain": ["c1", "a1"], "outcome": "denied",
           "code": "PERMISSION_DENIED", "reason": "not-granted", "approver": None, "prompt": None}
    # Computed by the code as it was before the new fields.
    old = "fd8abe9e493daeac72440042c19377145f9f1debd0a26cfcd87158ded293ff34"
    assert row_hash(GENESIS, row) == old
    assert row_hash(GENESIS, {**row, "payload_bytes": None, "payload_sha256": None}) == old
    assert row_hash(GENESIS, {**row, "payload_bytes": 6}) != old


async def _no_permissions_card(engine: Engine, tmp_path: Path, **settings: Any) -> None:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings or None)
    await offer_install(engine, manifest("acme.none", {}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.none"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})


async def test_refusals_beyond_the_limit_become_one_suppressed_row(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """5 a minute logged row by row; the rest are answered and summed up before the next row."""
    engine = make_engine()
    await _no_permissions_card(engine, tmp_path, denial_log_limit=5)
    await offer_install(engine, manifest("acme.clip", {"clipboard.write": {}}))
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.clip"}, workspace="w1")
    start = len(engine.log_rows())
    for i in range(20):
        d = await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})
        assert d.reason == "not-declared"
        clock.t += 0.5
    d = await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert d.reason == "not-declared"
    rows = engine.log_rows()[start:]
    assert len(rows) == 5 and all(r["outcome"] == "denied" for r in rows)
    # Another card has a budget of its own, and allowed calls are never suppressed.
    for _ in range(3):
        assert (await engine.call("c2", "clipboard.copyText", None, {"text": "x"})).code in (
            None, "RATE_LIMITED")
    assert len(engine.log_rows(card="c2")) == 3
    # A minute after the first ones, c1's next refusal is logged: its summary first.
    clock.t = 1000.0 + 60.5
    await engine.call("c1", "agents.prompt", "a1", {"text": "later"})
    rows = engine.log_rows(card="c1")[start - len(engine.log_rows(card="c2")):]
    summary, last = rows[-2], rows[-1]
    assert summary["outcome"] == "suppressed" and last["payload"] == "later"
    body = json.loads(summary["payload"])
    assert body == {"count": 16, "codes": {"PERMISSION_DENIED": 16},
                    "calls": {"agents.prompt": 15, "clipboard.copyText": 1},
                    "first": 1002.5, "last": 1010.0}
    assert summary["code"] == "PERMISSION_DENIED" and summary["call"] is None
    assert engine.verify_log().ok


async def test_suppressed_refusals_are_summed_up_at_close(make_engine: Any, tmp_path: Path,
                                                         clock: VirtualClock) -> None:
    """Refusals still unsummed when the engine closes get their row then; the chain verifies."""
    engine = make_engine()
    await _no_permissions_card(engine, tmp_path, denial_log_limit=2)
    for _ in range(10):
        await engine.call("c1", "agents.prompt", "a1", {"text": "x"})
    # Cards the canvas does not hold share one budget, the default 120 a minute.
    await asyncio.gather(*(engine.call(f"ghost{i}", "agents.prompt", "a1", {"text": "x"})
                           for i in range(125)))
    clock.t += 61
    await engine.call("ghost", "agents.prompt", "a1", {"text": "later"})
    last = engine.log_rows()[-2:]
    assert [r["outcome"] for r in last] == ["suppressed", "denied"]
    assert last[0]["card"] is None and last[1]["card"] == "ghost"
    engine.close()
    again = make_engine()
    rows = again.log_rows(outcome="suppressed")
    assert len(rows) == 2
    by_card = {r["card"]: json.loads(r["payload"])["count"] for r in rows}
    # Unknown cards share one budget: made-up ids gain nothing.
    assert by_card == {"c1": 8, None: 5}
    assert again.verify_log().ok


async def test_a_flood_of_refused_prompts_barely_grows_the_store(
        make_engine: Any, tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    """3,000 refused 100 KiB prompts from one card add far less than 40 MB to the database."""
    engine = make_engine()
    await _no_permissions_card(engine, tmp_path)
    engine.close()
    before = _size(db_path)
    engine = make_engine()
    text = "p" * (100 * KIB)
    for i in range(3000):
        d = await engine.call("c1", "agents.prompt", "a1", {"text": text})
        assert d.code == "PERMISSION_DENIED"
        clock.t += 0.01
    engine.close()
    grown = _size(db_path) - before
    assert grown < 2 * 1024 * KIB, grown  # 120 rows of 4 KiB and one summary
    again = make_engine()
    assert len(again.log_rows(outcome="denied")) == 120
    assert json.loads(again.log_rows(outcome="suppressed")[0]["payload"])["count"] == 2880
    assert again.verify_log().ok


async def test_without_suppression_refused_rows_still_stay_small(
        make_engine: Any, tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    """With a limit above the flood, 3,000 refused 100 KiB prompts keep 4 KiB each: < 20 MB."""
    engine = make_engine()
    await _no_permissions_card(engine, tmp_path, denial_log_limit=1_000_000)
    engine.close()
    before = _size(db_path)
    engine = make_engine()
    text = "p" * (100 * KIB)
    for _ in range(30):  # in batches that commit together, to keep the test quick
        out = await asyncio.gather(*(engine.call("c1", "agents.prompt", "a1", {"text": text})
                                     for _ in range(100)))
        assert {d.code for d in out} == {"PERMISSION_DENIED"}
    engine.close()
    grown = _size(db_path) - before
    assert grown < 20 * 1024 * KIB, grown
    assert len(make_engine().log_rows(outcome="denied")) == 3000


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.iterdir()
               if p.name.startswith(db.name) and p.is_file())
