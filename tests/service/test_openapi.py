"""The committed openapi.json is the document the routes make (SPEC §10.1)."""

from __future__ import annotations

import json

from engine.service.openapi import COMMITTED, render


def test_committed_openapi_matches_the_routes() -> None:
    """Regenerate with `python -m engine.service.openapi` when this fails."""
    assert COMMITTED.read_text() == render(), \
        "openapi.json drifted from the routes: run .venv/bin/python -m engine.service.openapi"


def test_document_is_openapi_3_1_with_every_route_and_problem_errors() -> None:
    """Every route of §10.1 (tool calls included, with their cancel and list routes); errors documented as problem+json; no 422."""
    doc = json.loads(COMMITTED.read_text())
    assert doc["openapi"] == "3.1.0"
    expected = {
        ("get", "/v1/health"), ("get", "/openapi.json"), ("post", "/v1/tokens"),
        ("delete", "/v1/tokens/{token_id}"),
        ("post", "/v1/workspaces"), ("get", "/v1/workspaces/{ws}"),
        ("post", "/v1/workspaces/{ws}/nodes"), ("get", "/v1/workspaces/{ws}/nodes"),
        ("get", "/v1/nodes/{node_id}"), ("patch", "/v1/nodes/{node_id}"),
        ("delete", "/v1/nodes/{node_id}"),
        ("post", "/v1/workspaces/{ws}/arrows"), ("get", "/v1/workspaces/{ws}/arrows"),
        ("delete", "/v1/arrows/{arrow_id}"), ("post", "/v1/packages"),
        ("get", "/v1/packages/{name}/review"), ("get", "/v1/packages/{name}/diff"),
        *(("post", f"/v1/packages/{{name}}/{verb}")
          for verb in ("install", "grant", "revoke", "approve", "decline")),
        ("post", "/v1/calls"), ("post", "/v1/calls:batch"), ("post", "/v1/emit"),
        ("get", "/v1/prompts/{prompt_id}"), ("get", "/v1/prompts/{prompt_id}/wait"),
        ("get", "/v1/holds"), ("post", "/v1/holds/{prompt_id}/approve"),
        ("post", "/v1/holds/{prompt_id}/reject"), ("get", "/v1/events"), ("get", "/v1/log"),
        ("get", "/v1/log/export"), ("post", "/v1/log/verify"), ("get", "/v1/reach/{card}"),
        ("get", "/v1/history"), ("post", "/v1/tool-calls"),
        ("post", "/v1/tool-calls/{call_id}/result"), ("get", "/v1/tool-calls/{call_id}"),
        ("get", "/v1/tool-calls/{call_id}/wait"), ("post", "/v1/tool-calls/{call_id}/cancel"),
        ("get", "/v1/agents/{agent}/tools"),
    }
    got = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert got == expected
    for path, ops in doc["paths"].items():
        for op in ops.values():
            assert "422" not in op["responses"]
            if path != "/v1/health":
                assert "application/problem+json" in op["responses"]["401"]["content"]
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    body = doc["components"]["schemas"]["CallBody"]
    assert body["additionalProperties"] is False
