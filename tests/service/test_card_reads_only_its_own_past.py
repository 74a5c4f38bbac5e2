"""A card's token reads only its own card's past, not that of an earlier card given its id.

(Found in round 24: a card removed and another added with its id — of another
vendor's package, say — read the removed card's log rows over ``GET /v1/log``,
prompt texts included, and its prompts and tool calls by id.)

SPEC §10.1: a card token acts only as that card. A node's id may be given again
once the node is removed (or a card given another package): the events feed
already starts afresh for it (`engine.service.events.Feeds`); the log, the
prompts and the tool calls the card may read start where the card did too. The
operator still reads everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import build_canvas

EVIL = {"name": "evil.vendor", "version": "1.0.0", "permissions": {},
        "tools": [{"name": "echo", "description": "e", "input": {"type": "object"}}]}
TOOLS = {**EVIL, "name": "acme.tools"}


@contextmanager
def _served(store: str, tmp: Path, request: pytest.FixtureRequest
            ) -> Iterator[Callable[[str | None], httpx.Client]]:
    """Clients of an ``arrowgate serve`` process on SQLite or on PostgreSQL."""
    if store == "sqlite":
        from tests.service.served import serve

        with serve(tmp) as served:
            clients: list[httpx.Client] = []

            def client(token: str | None) -> httpx.Client:
                c = served.client(token or "operator")
                clients.append(c)
                return c

            try:
                yield client
            finally:
                for c in clients:
                    c.close()
        return
    from tests.pg.servers import start

    server = start(request.getfixturevalue("pg_dsn"), tmp, "s1")
    try:
        yield server.client
    finally:
        server.stop()


def _ok(r: httpx.Response) -> Any:
    assert r.status_code in (200, 201, 204), r.text
    return r.json() if r.content else None


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_card_given_a_removed_card_s_id_reads_none_of_its_past(
        store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    with _served(store, tmp_path, request) as client:
        op = client(None)
        build_canvas(op, tmp_path / "proj")
        for path, body in (("/v1/packages", {"manifest": TOOLS}),
                           ("/v1/packages/acme.tools/install", {"grant": "required"}),
                           ("/v1/workspaces/w1/nodes", {"id": "k1", "type": "card",
                                                        "package": "acme.tools"}),
                           ("/v1/workspaces/w1/arrows", {"id": "t1", "from": "a1", "to": "k1"}),
                           ("/v1/packages", {"manifest": EVIL}),
                           ("/v1/packages/evil.vendor/install", {"grant": "required"})):
            _ok(op.post(path, json=body))
        agent = client(_ok(op.post("/v1/tokens", json={"principal": "agent:a1"}))["token"])
        said = _ok(op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                              "target": "a1", "args": {"text": "SECRET plan"}}))
        asked = _ok(agent.post("/v1/tool-calls", json={"agent": "a1", "card": "k1",
                                                       "tool": "echo", "args": {"x": "SECRET"}}))
        for card in ("c1", "k1"):
            rows = _ok(op.get("/v1/log", params={"card": card}))["rows"]
            assert rows and all(r["card"] == card for r in rows)
            _ok(op.delete(f"/v1/nodes/{card}"))
            _ok(op.post("/v1/workspaces/w1/nodes", json={"id": card, "type": "card",
                                                         "package": "evil.vendor"}))
        c1 = client(_ok(op.post("/v1/tokens", json={"principal": "card:c1"}))["token"])
        k1 = client(_ok(op.post("/v1/tokens", json={"principal": "card:k1"}))["token"])

        assert _ok(c1.get("/v1/log"))["rows"] == []
        assert _ok(c1.get("/v1/log", params={"card": "c1"}))["rows"] == []
        assert _ok(k1.get("/v1/log"))["rows"] == []
        assert c1.get(f"/v1/prompts/{said['prompt']}").status_code == 404
        assert c1.get(f"/v1/prompts/{said['prompt']}/wait",
                      params={"timeout": 0}).status_code == 404
        assert k1.get(f"/v1/tool-calls/{asked['id']}").status_code == 404
        assert k1.get(f"/v1/tool-calls/{asked['id']}/wait",
                      params={"timeout": 0}).status_code == 404
        # The operator reads it all still; the new card reads what it does itself.
        assert len(_ok(op.get("/v1/log", params={"card": "c1"}))["rows"]) == 1
        _ok(op.get(f"/v1/prompts/{said['prompt']}"))
        _ok(op.get(f"/v1/tool-calls/{asked['id']}"))
        _ok(c1.post("/v1/calls", json={"card": "c1", "call": "clipboard.write",
                                       "args": {"text": "mine"}}))
        mine = _ok(c1.get("/v1/log"))["rows"]
        assert [r["package"] for r in mine] == ["evil.vendor"]
