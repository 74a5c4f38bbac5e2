"""``node remove`` / ``arrow remove`` through ``--service`` reach an id ``.`` or ``..``
that a store already holds.

(Found by a hostile review, round 14, when it did not hold: ``node remove`` / ``arrow remove`` through ``--service`` cannot reach an id ``.`` or ``..``.)

Since round 16 no new id is ``.`` or ``..`` (`engine.core.text.id_problem`), but a
database written before may hold one, and ``DELETE /v1/nodes/%2E%2E`` removes node
``..``. But `engine.app.cli_write._seg`
escapes with ``quote(value, safe="")``, which leaves dots alone: the client
then normalises ``/v1/nodes/..`` to ``/v1/`` and the verb gets the router's
404 ("NOT_FOUND: Not Found", naming nothing). A narrowing of consent (removing
a node or an arrow, SPEC §4.5) is impossible through the CLI for such ids.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck
from tests.service.conftest import build_canvas, start_server


@pytest.mark.parametrize("node_id", [".", ".."])
def test_remove_a_dot_named_node_and_arrow_over_the_service(tmp_path: Path, capsys,
                                                           node_id: str, monkeypatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    running = start_server(tmp_path / "a.db")
    try:
        op = running.client()
        build_canvas(op, tmp_path / "proj")
        # Made as an engine before round 16 made them: the id rule lifted.
        with mock.patch("engine.services.nodes.id_problem", lambda _kind, _value: None):
            assert op.post("/v1/workspaces/w1/nodes",
                           json={"id": node_id, "type": "note"}).status_code == 201
            assert op.post("/v1/workspaces/w1/arrows",
                           json={"id": node_id, "from": "c1", "to": "n1"}).status_code == 201
        token = tmp_path / "a.db.operator-token"
        service = ["--service", running.address, "--token-file", str(token)]
        code = main(["arrow", "remove", node_id, *service])
        err = capsys.readouterr().err
        assert code == 0, err
        code = main(["node", "remove", node_id, *service])
        err = capsys.readouterr().err
        assert code == 0, err
        ids = {n["id"] for n in op.get("/v1/workspaces/w1/nodes").json()}
        arrows = {a["id"] for a in op.get("/v1/workspaces/w1/arrows").json()}
        assert node_id not in ids and node_id not in arrows
    finally:
        running.shutdown()
