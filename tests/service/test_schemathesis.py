"""schemathesis against the running service, from the committed openapi.json.

Property tests: for every operation, requests generated from the document —
valid ones and, negatively, invalid ones — go to a real server over loopback
TCP with the operator token, and each response is checked against the
document (status codes, content types, bodies), and for no 5xx. The number
of examples is bounded so the suite stays quick.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from tests.service.conftest import build_canvas, start_server

DOC = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text())
# The event stream never ends on its own: it is tested in test_events.py.
schema = schemathesis.openapi.from_dict(DOC).exclude(path="/v1/events")


@pytest.fixture(scope="module")
def canvas_server(tmp_path_factory):
    """One server on loopback TCP with the test canvas on it, for the whole module."""
    tmp = tmp_path_factory.mktemp("schemathesis")
    server = start_server(tmp / "arrowgate.db", tcp=True)
    build_canvas(server.client(), tmp / "proj")
    yield server
    server.shutdown()


@schema.parametrize()
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_document(case, canvas_server) -> None:
    """Every response conforms to openapi.json; nothing is a server error."""
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    case.call_and_validate(base_url=canvas_server.address,
                           headers={"Authorization": f"Bearer {canvas_server.token}"},
                           # Data valid by the schema may still be refused by the engine
                           # (a node field wrong for its type, an unknown id): a 4xx.
                           excluded_checks=[positive_data_acceptance], timeout=30)
