"""An agent's open tool call goes with the package its card had when the call was made:
when a person changes the card's package, the call is cancelled (``PERMISSION_DENIED``,
``not-connected``), on SQLite and PostgreSQL alike — even when the new package offers a
tool of the same name.

SPEC §9: an agent calls a tool a card's *package* offers, with arguments checked against
that package's schema, and the call is open until the card answers or "the card's package
stops being installed and approved". A card made a card of another package is no longer
the card the agent called: its answer would come under another package's code and grant,
to arguments checked against another schema, and revoking the first package would no
longer reach the call.

Found in round 22 (consent22's note): `Tools.revalidate` judged an open tool call with the
card's package of now, so a call to acme.one's ``lookup`` stayed open, and was answered,
after its card became other.one's, which offers a ``lookup`` too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine, file_digests


def _manifest(name: str) -> dict[str, Any]:
    return {"name": name, "version": "1.0.0", "permissions": {},
            "tools": [{"name": "lookup", "input": {"type": "object"}}]}


async def test_an_open_tool_call_is_cancelled_when_its_card_changes_package(
        open_engine: Any, tmp_path: Path) -> None:
    # GIVEN agent a1 calling acme.one's tool through card c1
    app: Engine = open_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    for name in ("acme.one", "other.one"):
        await app.offer(name, _manifest(name), file_digests({"index.js": f"// {name}"}))
        await app.install(name)
    await app.add_node({"id": "c1", "type": "card", "package": "acme.one"}, workspace="w1")
    await app.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await app.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    opened = await app.tool("a1", "c1", "lookup", {"q": "x"})
    assert opened.outcome == "ok", opened
    call_id = opened.value["id"]
    # WHEN a person, in another process, makes c1 a card of other.one
    tui: Engine = open_engine()
    await tui.set_node("c1", {"package": "other.one"})
    # THEN the call is cancelled on both engines, not-connected, and answers nothing
    for engine in (tui, app):
        engine.catch_up()
        tc = engine.tool_call(call_id)
        assert tc is not None
        assert (tc.state, tc.code, tc.reason) == ("cancelled", "PERMISSION_DENIED",
                                                  "not-connected"), engine
