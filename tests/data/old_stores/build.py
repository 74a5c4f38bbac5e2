"""Build a store with an older arrowgate and write it out as SQL, for tests/durability/
test_an_older_store_upgrades_with_its_consent.py.

Run with the older version's tree first on the path (a detached worktree of its
commit), from this checkout:

    git worktree add --detach /tmp/old-r10 eacb94e
    PYTHONPATH=/tmp/old-r10 .venv/bin/python tests/data/old_stores/build.py r10 [PG_URL]

(``r10`` is eacb94e, the end of round 10: SQLite m001–m012, PostgreSQL m001–m003;
``r20`` is 376ab60, the end of round 20: SQLite m001–m020, PostgreSQL m001–m008.
Round 10's code imports watchfiles, no longer a dependency: install it beside.)

It builds the canvas below on a new SQLite file with that code (and on the empty
PostgreSQL database PG_URL, when given and that version has the store), then writes
``<name>.sqlite.sql`` (the file's ``iterdump``: the old schema's CREATE statements and
every row), ``<name>.pg.sql`` (``pg_dump --no-owner --inserts``) and ``<name>.json``
(what the SQL cannot say: the token secrets, the anchor's state, the held prompt's
text digest). The canvas: two packages, one grant given and revoked, one package's
only permission revoked; prompts accepted, held, approved and rejected, five of the
card's six a minute counted; two tool calls, one answered; a secret; two tokens, one
revoked.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine import Engine  # the older version's: it is first on the path

HERE = Path(__file__).parent


def _digests(files: dict[str, str]) -> dict[str, str]:
    return {p: hashlib.sha256(t.encode()).hexdigest() for p, t in files.items()}


async def _build(engine: Any, folder: Path) -> dict[str, Any]:
    """The canvas, its calls and its consent; returns what the test needs to know."""
    await engine.create_workspace("w1", str(folder))
    standup = {"name": "acme.standup", "version": "1.0.0",
               "permissions": {"agents.prompt": {}, "terminals.write": {},
                               "cards.connected": {}, "usage.read": {"optional": True},
                               "clipboard.write": {"optional": True}},
               "tools": ["summarize"]}
    other = {"name": "acme.other", "version": "0.1.0", "permissions": {"agents.prompt": {}}}
    for manifest in (standup, other):
        await engine.offer(manifest["name"], manifest,
                           _digests({"manifest.json": json.dumps(manifest)}))
        await engine.install(manifest["name"])
    await engine.grant("acme.standup", "usage.read")
    await engine.grant("acme.standup", "clipboard.write")
    await engine.revoke("acme.standup", "clipboard.write")
    await engine.revoke("acme.other", "agents.prompt")
    for node in ({"id": "c1", "type": "card", "package": "acme.standup"},
                 {"id": "c2", "type": "card", "package": "acme.other"},
                 {"id": "a1", "type": "agent", "name": "Builder"},
                 {"id": "a2", "type": "agent", "name": "Quiet"},
                 {"id": "y1", "type": "agent", "name": "Yolo", "dangerous": True},
                 {"id": "t1", "type": "terminal", "name": "shell"},
                 {"id": "n1", "type": "note", "text": "hi"}):
        await engine.add_node(node, workspace="w1")
    for arrow in ({"id": "e1", "from": "c1", "to": "a1"}, {"id": "e2", "from": "c1", "to": "y1"},
                  {"id": "e3", "from": "c1", "to": "t1"}, {"id": "e4", "from": "a1", "to": "c1"},
                  {"id": "e5", "from": "c2", "to": "a1"}, {"id": "e6", "from": "c1", "to": "n1"},
                  {"id": "e7", "from": "c1", "to": "a2"}):
        await engine.add_arrow(arrow)
    await engine.call("c1", "agents.prompt", "a1", {"text": "hello one"})
    await engine.call("c1", "agents.prompt", "a1", {"text": "hello two"})
    await engine.call("c2", "agents.prompt", "a1", {"text": "revoked"})
    await engine.call("c1", "clipboard.copyText", None, {"text": "revoked"})
    await engine.call("c1", "terminals.write", "t1", {"data": "ls\n"})
    await engine.call("c1", "cards.note.append", "n1", {"text": " more"})
    held = [(await engine.call("c1", "agents.prompt", "y1", {"text": f"rm -rf build {i}"})
             ).value["prompt"] for i in range(3)]

    def sha(prompt: str) -> str:
        return hashlib.sha256(engine.prompt(prompt).text.encode()).hexdigest()

    await engine.approve_hold(held[0], text_sha256=sha(held[0]))
    await engine.reject_hold(held[1])
    first = await engine.tool("a1", "c1", "summarize")
    await engine.tool("a1", "c1", "summarize")
    answer = engine.answer_tool
    if "by" in inspect.signature(answer).parameters:
        await answer(first.value["id"], result={"ok": True}, by="card:c1")
    else:
        await answer(first.value["id"], result={"ok": True})
    await engine.set_secret("gh", "api.github.com", "s3cret")
    from engine.service.auth import TokenStore

    tokens = TokenStore(engine.store.tokens())
    _live_id, live = tokens.mint_sync("card:c1")
    dead_id, dead = tokens.mint_sync("card:c1")
    tokens.table.revoke(dead_id, time.time())
    assert engine.verify_log().ok
    return {"held": held[2], "held_sha256": sha(held[2]), "tokens": {"live": live, "revoked": dead}}


def _anchor(path: Path) -> dict[str, Any]:
    """The anchor's state once its engine closed (its last record written then)."""
    from engine.store.anchor import AnchorFile

    state = AnchorFile(path).read()
    assert state is not None and state.committed is not None and state.pending is None
    history = getattr(state, "history", None)  # recorded since round 16
    return {"committed": list(state.committed), "history": list(history) if history else None}


async def main(name: str, pg_url: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        engine = Engine.open(Path(tmp) / "app.db")
        out: dict[str, Any] = {"sqlite": await _build(engine, folder)}
        engine.close()
        out["sqlite"]["anchor"] = _anchor(Path(tmp) / "app.db.anchor")
        conn = sqlite3.connect(Path(tmp) / "app.db")
        (HERE / f"{name}.sqlite.sql").write_text("\n".join(conn.iterdump()) + "\n")
        conn.close()
        if pg_url is not None:
            engine = Engine.open(None, store=pg_url)
            out["postgresql"] = await _build(engine, folder)
            anchor = engine.store.anchor.path
            engine.close()
            out["postgresql"]["anchor"] = _anchor(anchor)
            dump = subprocess.run(["pg_dump", "--no-owner", "--no-privileges", "--inserts",
                                   pg_url], check=True, capture_output=True, text=True).stdout
            # pg_dump's comments and blank lines say nothing the statements do not, and
            # its psql commands (\restrict) are psql's, not SQL.
            (HERE / f"{name}.pg.sql").write_text("".join(
                line for line in dump.splitlines(keepends=True)
                if line.strip() and not line.startswith(("--", "\\"))))
    (HERE / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
