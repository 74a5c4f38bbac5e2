"""An id the service takes in a body must be reachable in the routes that name it.

`POST /v1/workspaces/{ws}/nodes` and `/arrows` (and `POST /v1/workspaces`) accept an id
holding "/" (201), but every route that names a node, arrow, workspace or agent in its
path matches one segment of the *decoded* path: `/v1/arrows/e%2F9` is decoded to
`/v1/arrows/e/9` and answers 404 (reason "route"). A generated client (openapi.json's
path parameters are plain strings) or the MCP bridge escapes the id as it should and
still cannot reach it: the arrow, the consent for data it stands for, cannot be removed
through the service, the node cannot be changed or removed, the agent's tools cannot be
listed.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from tests.service.conftest import Running, build_canvas


def seg(value: str) -> str:
    return quote(value, safe="")


def test_an_id_with_a_slash_is_refused_or_reachable(unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    made = [op.post("/v1/workspaces/w1/nodes", json={"id": "c/3", "type": "card",
                                                     "package": "acme.standup"}),
            op.post("/v1/workspaces/w1/nodes", json={"id": "a/2", "type": "agent"}),
            op.post("/v1/workspaces/w1/arrows", json={"id": "e/9", "from": "c/3", "to": "a/2"})]
    if all(r.status_code == 400 for r in made):
        return  # refused at the door: nothing unreachable was made
    assert [r.status_code for r in made] == [201, 201, 201], [r.text for r in made]
    unreachable = []
    for method, path, body in (
            ("PATCH", f"/v1/nodes/{seg('a/2')}", {"name": "x"}),
            ("GET", f"/v1/reach/{seg('c/3')}", None),
            ("GET", f"/v1/agents/{seg('a/2')}/tools", None),
            ("DELETE", f"/v1/arrows/{seg('e/9')}", None),
            ("DELETE", f"/v1/nodes/{seg('c/3')}", None)):
        r = op.request(method, path, json=body)
        if r.status_code == 404:
            unreachable.append(f"{method} {path}: {r.json().get('reason')}")
    assert not unreachable, "made with 201, then no route reaches it:\n" + "\n".join(unreachable)
    arrows = [a["id"] for a in op.get("/v1/workspaces/w1/arrows").json()]
    assert "e/9" not in arrows, "the arrow (consent for data) is still on the canvas"
