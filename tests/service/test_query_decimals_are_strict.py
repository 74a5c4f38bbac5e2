"""A fractional query value (seconds: ``wait``, ``timeout``) is a plain decimal: digits,
optionally one ``.`` and digits, at most 16 either side. ``nan``, ``inf``, ``1e3``,
`` 1``, ``1_0`` and the like are a 400 problem naming the parameter and what it takes,
and change nothing (SPEC §10.1).

(Issue 16, round 33: FastAPI read them as pydantic's lax mode reads a float, so
``timeout=1e2`` was 100 seconds and ``wait=1_0`` ten; ``nan`` was refused only as "not
less than or equal to 300". The fast lane, which reads plain decimals itself, hands
everything else to FastAPI.)
Every route with such a parameter is asked, over real HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import Running, build_canvas, log_rows
from tests.service.test_tool_calls import build

BAD = ["nan", "NaN", "inf", "-inf", "Infinity", "1e3", "1E-3", "0x1p3", " 1", "1 ", "1\n",
       "1_0", "+1", "1.", ".5", "1.2.3", "1,5", "", "٣", "１", "true",
       "1" * 17, "0." + "1" * 17]
GOOD = ["0", "0.05", "000", "0." + "0" * 16]


def _refused(r: httpx.Response, name: str, value: str) -> None:
    assert r.status_code == 400, (name, value, r.status_code, r.text[:300])
    problem = r.json()
    assert problem["code"] == "INVALID_ARGUMENT" and problem["reason"] == "invalid", problem
    assert f"query.{name}" in problem["message"], (name, value, problem)
    assert "plain decimal" in problem["message"], problem
    assert problem["problems"][0]["where"] == f"query.{name}", problem


def test_tool_routes_take_seconds_as_plain_decimals(serve_at: Callable[..., Running],
                                                    tmp_path: Path) -> None:
    """``wait`` of opening a tool call and of the tool list, ``timeout`` of a tool call's
    wait: anything but a plain decimal is refused, naming the parameter; nothing done."""
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1 = running.client(tokens["a1"])
    call = {"agent": "a1", "card": "c1", "tool": "ping"}
    opened = a1.post("/v1/tool-calls", json=call).json()
    assert opened["state"] == "open", opened
    asks: list[tuple[str, str, str]] = [("POST", "/v1/tool-calls", "wait"),
                                        ("GET", "/v1/agents/a1/tools", "wait"),
                                        ("GET", f"/v1/tool-calls/{opened['id']}/wait", "timeout")]
    before = log_rows(running.db)
    for method, path, name in asks:
        for value in BAD:
            # WHEN seconds are written as no plain decimal is
            r = a1.request(method, path, params={name: value},
                           json=call if method == "POST" else None)
            # THEN it is refused, naming the parameter and what it takes
            _refused(r, name, value)
    # AND nothing was done (no tool call opened)
    assert log_rows(running.db) == before
    for method, path, name in asks:
        for value in GOOD:
            r = a1.request(method, path, params={name: value},
                           json=call if method == "POST" else None)
            assert r.status_code == 200, (path, name, value, r.text[:300])


def test_a_prompt_wait_takes_its_timeout_as_a_plain_decimal(unix_server: Running,
                                                            tmp_path: Path) -> None:
    """``GET /v1/prompts/{id}/wait?timeout=S``: the same."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held", held
    path = f"/v1/prompts/{held['prompt']}/wait"
    before = log_rows(unix_server.db)
    for value in BAD:
        _refused(op.get(path, params={"timeout": value}), "timeout", value)
    assert log_rows(unix_server.db) == before
    for value in GOOD:
        assert op.get(path, params={"timeout": value}).status_code == 200, value


@pytest.mark.parametrize("value", ["300.5", "1000"])
def test_a_plain_decimal_past_the_bound_is_still_refused_by_the_bound(
        unix_server: Running, tmp_path: Path, value: str) -> None:
    """A plain decimal is then held to the route's bound (at most 300 seconds)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    r = op.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": value})
    assert r.status_code == 400 and "plain decimal" not in r.text, r.text[:300]


#: What ``float()`` (or ``\d``) read as a time's number, and no document said.
BAD_TIMES = ["1e9", "1E9", "1_700_000_000", " 1700000000", "1700000000 ", "+1700000000",
             "1700000000.", ".5", "0x1p3", "nan", "inf", "٣", "١٠m", "1e1m", " 10m", "10m "]


@pytest.mark.parametrize("name", ["since", "until"])
def test_a_log_time_takes_its_seconds_as_a_plain_decimal(unix_server: Running,
                                                         tmp_path: Path, name: str) -> None:
    """``GET /v1/log?since=…&until=…``: epoch seconds and a span's count are plain decimals
    too; anything else is a 400 naming the parameter and what a time is."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    for value in BAD_TIMES:
        r = op.get("/v1/log", params={name: value})
        assert r.status_code == 400, (name, value, r.status_code, r.text[:300])
        problem = r.json()
        assert problem["code"] == "INVALID_ARGUMENT" and problem["reason"] == name, problem
        assert problem["message"].startswith(f"INVALID_ARGUMENT: {name}: "), problem
        assert "seconds since the epoch (1700000000" in problem["message"], problem
    for value in ("0", "1700000000", "1700000000.5", "10m", "1.5h", "2026-01-15T08:00"):
        assert op.get("/v1/log", params={name: value}).status_code == 200, (name, value)
