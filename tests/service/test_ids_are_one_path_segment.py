"""An id the service takes in a body is one it can name in a path: a node, arrow or
workspace id holding "/", or the id "." or "..", is refused at the door (400 INVALID_NODE /
INVALID_ARROW / INVALID_ARGUMENT, reason ``bad-id``, naming what was wrong) and nothing is
made; an id a path can carry, escaped, is reachable by every route that names it.

The routes match one segment of the *decoded* path (``/v1/arrows/e%2F9`` is
``/v1/arrows/e/9``), and a URL client resolves the dot segments away before sending.
(Found by a helper: ``c/3``, ``e/9``, ``w/2`` were made with 201, then every route naming
them answered 404 ``route``: the arrow, consent for data, could not be removed.)
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from tests.service.conftest import Running, build_canvas, snapshot

TABLES = ("workspaces", "nodes", "arrows")


def seg(value: str) -> str:
    """``value`` escaped as one path segment."""
    return quote(value, safe="")


def _made(db: Path) -> dict[str, list[object]]:
    return {t: rows for t, rows in snapshot(db).items() if t in TABLES}


@pytest.mark.parametrize(("bad", "named"), [
    ("c/3", "holds '/'"), ("/", "holds '/'"), (".", "dot segment"), ("..", "dot segment")])
@pytest.mark.parametrize(("path", "body", "code"), [
    ("/v1/workspaces/w1/nodes", {"type": "card", "package": "acme.standup"}, "INVALID_NODE"),
    ("/v1/workspaces/w1/arrows", {"from": "c2", "to": "a1"}, "INVALID_ARROW"),
    ("/v1/workspaces", {"folder": "{folder}"}, "INVALID_ARGUMENT"),
])
def test_an_id_that_is_not_one_path_segment_is_refused(
        unix_server: Running, tmp_path: Path, bad: str, named: str, path: str,
        body: dict[str, str], code: str) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = _made(unix_server.db)
    sent = {"id": bad, **{k: v.format(folder=tmp_path) for k, v in body.items()}}
    r = op.post(path, json=sent)
    assert r.status_code == 400, r.text
    problem = r.json()
    assert (problem["code"], problem["reason"]) == (code, "bad-id"), r.text
    assert named in problem["message"] and repr(bad) in problem["message"], r.text
    assert _made(unix_server.db) == before


def test_an_id_a_path_can_carry_is_reachable_by_every_route(unix_server: Running,
                                                             tmp_path: Path) -> None:
    """Spaces, ``%``, ``?``, ``#`` and accents travel escaped and come back decoded."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card, agent, arrow = "c 3%?", "a#2 é", "e%2F9"
    made = [op.post("/v1/workspaces/w1/nodes", json={"id": card, "type": "card",
                                                     "package": "acme.standup"}),
            op.post("/v1/workspaces/w1/nodes", json={"id": agent, "type": "agent"}),
            op.post("/v1/workspaces/w1/arrows", json={"id": arrow, "from": card, "to": agent})]
    assert [r.status_code for r in made] == [201, 201, 201], [r.text for r in made]
    for method, path, body in (
            ("PATCH", f"/v1/nodes/{seg(agent)}", {"name": "x"}),
            ("GET", f"/v1/reach/{seg(card)}", None),
            ("GET", f"/v1/agents/{seg(agent)}/tools", None),
            ("DELETE", f"/v1/arrows/{seg(arrow)}", None),
            ("DELETE", f"/v1/nodes/{seg(card)}", None)):
        r = op.request(method, path, json=body)
        assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
    arrows = [a["id"] for a in op.get("/v1/workspaces/w1/arrows").json()]
    assert arrow not in arrows, "the arrow (consent for data) is still on the canvas"
