"""An integer in a query string is written as one: digits, nothing else. ``after=10.0``,
``after= 10``, ``limit=+5`` or ``limit=1_0`` is a 400 problem naming the parameter and
changes nothing (SPEC §10.1: malformed input is a 400 problem), as the document says
(``"type": "integer"``).

Found in round 32 (bounds32; the earlier rounds' note): the routes read them as
pydantic's lax mode does, so ``GET /v1/history?after=10.0`` and ``?after=%2010`` were
read as 10, and schemathesis flagged the first as a schema-violating request accepted
(ST201) whenever its negative cases happened to write an integer parameter as a float.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas

_BAD = ["10.0", " 10", "10 ", "+5", "1_0", "1e1", "0x10", "٣", "10\n", "", "true"]


@pytest.mark.parametrize("path", ["/v1/log", "/v1/history"])
def test_an_integer_written_otherwise_is_a_400_naming_it(unix_server: Running, tmp_path: Path,
                                                          path: str) -> None:
    """Each of after and limit given as anything but digits is a 400 naming it; digits are
    read as ever."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    for name in ("after", "limit"):
        for value in _BAD:
            # WHEN an integer parameter is written as no integer is
            r = op.get(path, params={name: value})
            # THEN it is refused, naming the parameter
            assert r.status_code == 400, (path, name, value, r.status_code, r.text[:200])
            problem = r.json()
            assert problem["code"] == "INVALID_ARGUMENT", problem
            assert name in problem["message"], (name, value, problem)
        # AND digits are taken, leading zeros too
        assert op.get(path, params={name: "010"}).status_code == 200
