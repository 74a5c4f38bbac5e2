"""The arrow log: rows per decision and resolution, the chain, and tamper detection."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Engine, StoreFailed
from engine.store.log import FIELDS, _canonical, row_hash


async def _rows(world: Engine) -> None:
    for i in range(5):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})


async def test_rows_carry_the_whole_decision(world: Engine) -> None:
    """Each row has the arrow, card, package hash, call, payload, outcome and chain."""
    await _rows(world)
    row = world.log_rows(arrow="e3")[0]
    assert row["card"] == "c1" and row["package"] == "acme.prompter"
    assert row["version"].startswith("sha256:") and row["payload"] == "cmd 0"
    assert row["outcome"] == "ok" and row["target"] == "t1" and row["call"] == "terminals.run"


async def test_untouched_log_verifies(world: Engine) -> None:
    """No false alarm on an untouched log."""
    await _rows(world)
    assert world.verify_log().ok


async def test_a_log_made_at_negative_zero_verifies(tmp_path) -> None:
    """A clock that reads -0.0 (a replay case may say so) still leaves a log that verifies:
    SQLite stores -0.0 as 0, so the engine's time is 0.0 there, not -0.0."""
    from engine.app.replay import VirtualClock

    engine = Engine.open(tmp_path / "z.db", clock=VirtualClock(-0.0))
    try:
        await engine.call("nobody", "agents.prompt", "a1", {"text": "hi"})
        assert engine.log_rows()[0]["t"] == 0.0
        assert engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.parametrize("tamper, first_bad", [
    ("update log set payload = 'rm -rf /' where seq = 2", 2),
    ("update log set outcome = 'denied', code = 'X' where seq = 3", 3),
    ("delete from log where seq = 3", 4),
    ("insert into log (seq, t, call, outcome, prev, hash) values (100, 0, 'x', 'ok', 'a', 'b')", 100),
])
async def test_tampering_is_detected(world: Engine, tamper: str, first_bad: int) -> None:
    """Altered payloads and outcomes, deleted and inserted rows name the first bad row."""
    await _rows(world)
    world.db.conn.execute(tamper)
    result = world.verify_log()
    assert not result.ok and result.first_bad == first_bad


async def test_a_failed_log_write_refuses_the_call(world: Engine, monkeypatch) -> None:
    """If the log row cannot be written, the call is refused and nothing else happens."""
    before_prompts = world.prompts()

    def broken(row):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(world.log, "append_fields", broken)
    with pytest.raises(StoreFailed, match="disk I/O error"):
        await world.call("c1", "agents.prompt", "a1", {"text": "hello"})
    monkeypatch.undo()
    assert world.prompts() == before_prompts
    assert world.state.counters.retry_after("c1", "prompt", world.now()) is None
    assert world.db.execute("select count(*) from prompts").fetchone()[0] == 0
    assert world.verify_log().ok


async def test_a_failed_consent_write_changes_nothing(world: Engine, monkeypatch) -> None:
    """A revoke whose write fails leaves the grant in place, in memory and on disk."""
    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(world.history, "record", broken)
    with pytest.raises(StoreFailed):
        await world.revoke("acme.prompter", "agents.prompt")
    monkeypatch.undo()
    assert world.state.granted("acme.prompter", "agents.prompt")
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "still"})).allowed


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_json_values, min_size=1, max_size=16))
def test_the_row_encoder_is_canonical_json(values: list) -> None:
    """The log's reusable encoder gives exactly what json.dumps gave, so old rows verify."""
    expected = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert _canonical(values) == expected
    row = dict(zip(FIELDS, (values + [None] * len(FIELDS))[:len(FIELDS)]))
    body = json.dumps([row.get(f) for f in FIELDS], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    assert row_hash("p", row) == hashlib.sha256(("p\n" + body).encode()).hexdigest()


_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=12)
_field = st.none() | _text | st.sampled_from(["c1", "w1", "agents.prompt", "denied"])
_row = st.tuples(
    # t: the engine's time is a float. Not -0.0 (``+ 0.0``): SQLite stores it as 0,
    # so such a row never verified, whichever way it was appended.
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0),
    st.lists(_field, min_size=7, max_size=7),  # workspace .. target
    st.none() | _text,  # payload
    st.none() | st.lists(_text, max_size=3),  # chain
    st.lists(_field, min_size=5, max_size=5),  # outcome .. prompt
    st.none() | st.tuples(st.integers(0, 10**9), _text),  # payload_bytes, payload_sha256
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, min_size=1, max_size=12))
def test_appended_rows_are_stored_and_hashed_as_given(rows: list) -> None:
    """`ArrowLog.append_fields` (the kinds' JSON, NULL columns left out of the insert)
    stores each row's fields as given, with the hash `row_hash` gives them."""
    from engine.store.log import EXTRA_FIELDS, GENESIS, ArrowLog

    engine = Engine.open(None)
    try:
        assert engine.db is not None
        log = ArrowLog(engine.db)
        conn = engine.db.conn
        conn.execute("BEGIN IMMEDIATE")
        log.begin()
        expected = []
        for t, before, payload, chain, after, extra in rows * 2:  # each kind twice
            values = [None, t, *before, payload, chain, *after]
            log.append_fields(values, extra)
            row = dict(zip(FIELDS, values))
            if extra is not None:
                row.update(zip(EXTRA_FIELDS, extra))
            expected.append(row)
        log.write_pending()
        conn.execute("COMMIT")
        stored = conn.execute("select * from log order by seq")
        names = [d[0] for d in stored.description]
        prev = GENESIS
        for want, got in zip(expected, stored, strict=True):
            got = dict(zip(names, got))
            if got["chain"] is not None:
                got["chain"] = json.loads(got["chain"])
            for name in (*FIELDS, *EXTRA_FIELDS):
                assert got[name] == want.get(name)
                assert type(got[name]) is type(want.get(name))
            assert got["prev"] == prev and got["hash"] == row_hash(prev, got)
            prev = got["hash"]
        assert log.verify().ok
    finally:
        engine.close()
