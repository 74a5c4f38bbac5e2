"""A request sent to `arrowgate mcp` before ``initialize`` is answered with an error that
says so, and nothing of it is kept (SPEC §10.2: a hostile agent never makes the bridge
hold its requests without bound).

Found in round 30 (mcp30): the SDK answered such a request "Invalid request parameters"
with empty data (naming nothing: the request was valid, only early), and kept it in its
session's table of requests in flight, which only an answer through the handler empties:
300 requests of 1 MiB sent before initialize grew the bridge by 300 MiB, for good.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server import session as sdk_session

from .mcplines import INITIALIZE, request, serve


class _Sessions:
    """Every SDK server session made meanwhile (its table of requests in flight)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[Any] = []
        made = self.made

        class Kept(sdk_session.ServerSession):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                made.append(self)

        monkeypatch.setattr("mcp.server.lowlevel.server.ServerSession", Kept)


async def test_a_request_before_initialize_is_refused_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a client that lists and calls before it initializes (with a large request)
    sessions = _Sessions(monkeypatch)
    early = [request(1, "tools/list", {"_meta": {"pad": "x" * 100_000}}),
             request(2, "tools/call", {"name": "c1__echo", "arguments": {}}),
             request(3, "ping")]
    # WHEN the bridge reads them, then the handshake and the same requests again
    out = await serve([*early, INITIALIZE,
                       {"jsonrpc": "2.0", "method": "notifications/initialized"},
                       request(4, "tools/list"), request(5, "ping")], monkeypatch)
    # THEN each early request but ping is refused, saying it came before initialize
    for rid, method in ((1, "tools/list"), (2, "tools/call")):
        error = out.answer(rid)["error"]
        assert error["code"] == -32600, error
        assert f"{method} before initialize" in error["message"], error
    assert out.answer(3)["result"] == {}
    # AND the SDK keeps none of them
    (session,) = sessions.made
    assert session._in_flight == {}
    # AND after the handshake the same requests are served
    assert out.answer("init")["result"]["serverInfo"]["name"] == "arrowgate"
    assert [t["name"] for t in out.answer(4)["result"]["tools"]] == [
        "c1__echo", "arrowgate__prompt_status"]
    assert out.answer(5)["result"] == {}
