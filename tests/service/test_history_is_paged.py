"""``GET /v1/history`` answers a page at a time, as ``GET /v1/log`` does: at most 1,000
entries (``limit``), with ``next`` to pass as ``after`` for the following page, null at the
history's end (rule: hostile input never floods; every answer is bounded whatever is
asked).

(Found in round 31: the route read, decoded and wrote the whole consent history in one
answer, on the service's event loop; a card's or an agent's refused consent attempts are
kept there, up to 120 a minute each, so 80,000 of them made one answer of 200 MB that
held the service 4.5 s and 720 MB.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.service.logpage import MAX_ROWS
from engine.store.database import open_database
from engine.store.history import ConsentHistory
from tests.conftest import manifest, offer_install, open_store
from tests.service.conftest import Running, build_canvas

#: Entries written straight into the store: past one page.
_MANY = MAX_ROWS + 234


def _write_refusals(db: Path, n: int) -> None:
    """``n`` refused consent attempts, as a card asking at will leaves them."""
    conn = open_database(db)
    history = ConsentHistory(conn)
    conn.execute("begin immediate")  # one transaction: one sync, not one an entry
    for i in range(n):
        history.record(float(i), "card:c1", "grant", {"package": f"acme.p{i % 2}"},
                       accepted=False, code="PERMISSION_DENIED", reason="operator-only")
    conn.execute("commit")
    conn.conn.close()


def _pages(client: Any, **params: Any) -> list[dict[str, Any]]:
    pages, after = [], None
    while True:
        r = client.get("/v1/history", params={**params, **({} if after is None
                                                           else {"after": after})})
        assert r.status_code == 200, r.text[:300]
        pages.append(r.json())
        after = pages[-1]["next"]
        if after is None:
            return pages


def test_the_history_is_read_a_page_at_a_time(unix_server: Running, tmp_path: Path) -> None:
    """A page holds at most 1,000 entries; following ``next`` reads every entry once, in
    order; ``limit`` and ``package`` narrow it; a limit past 1,000 is a 400."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = op.get("/v1/history").json()["entries"]
    _write_refusals(unix_server.db, _MANY)

    pages = _pages(op)
    assert [len(p["entries"]) for p in pages][:2] == [MAX_ROWS, len(before) + _MANY - MAX_ROWS]
    seqs = [e["seq"] for p in pages for e in p["entries"]]
    assert seqs == list(range(1, len(before) + _MANY + 1))
    assert pages[0]["next"] == MAX_ROWS

    small = _pages(op, limit=100, package="acme.p1")
    assert all(len(p["entries"]) <= 100 for p in small)
    mine = [e["seq"] for p in small for e in p["entries"]]
    assert mine == [e["seq"] for p in pages for e in p["entries"]
                    if e["subject"].get("package") == "acme.p1"]
    assert len(mine) == _MANY // 2

    r = op.get("/v1/history", params={"limit": MAX_ROWS + 1})
    assert r.status_code == 400, r.text[:300]


async def test_history_entries_stop_at_their_limit_on_either_store(store: str) -> None:
    """``entries(limit=n)``: the first n entries above ``after`` (of the package asked),
    on SQLite as on PostgreSQL."""
    engine = open_store(store)
    try:
        await engine.create_workspace("w1", str(Path(store).parent)
                                      if not store.startswith("postgresql") else "/tmp")
        await offer_install(engine, manifest("acme.a", {"clipboard.write": {"optional": True}}))
        for _ in range(4):
            await engine.grant("acme.a", "clipboard.write")
            await engine.revoke("acme.a", "clipboard.write")
        every = engine.history.entries()
        assert len(every) >= 10
        assert engine.history.entries(limit=3) == every[:3]
        assert engine.history.entries(after=every[4]["seq"], limit=2) == every[5:7]
        theirs = [e for e in every if e["subject"].get("package") == "acme.a"]
        assert engine.history.entries(package="acme.a", limit=4) == theirs[:4]
        assert engine.history.entries(limit=len(every) + 5) == every
    finally:
        engine.close()


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(unix_server: Running, limit: int) -> None:
    """A page of no entries is no page: 400, as ``GET /v1/log`` says."""
    assert unix_server.client().get("/v1/history", params={"limit": limit}).status_code == 400
