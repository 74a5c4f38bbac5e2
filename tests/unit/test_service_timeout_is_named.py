"""A service that never answers is told as such: the error names the timeout.

The write verbs' ``--service`` client waits a bounded time (30 s) for an answer. A
server that accepts the connection and never answers (hung, or not arrowgate) ends
in an error that says what happened, not an empty reason.

(Found in round 24: httpx's timeout errors carry no text, so the verb said only
``cannot reach the service at ADDRESS: `` after 30 seconds.)
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from engine.app.cli_write import Failure, ServiceBackend


@pytest.mark.parametrize("error", [httpx.ReadTimeout(""), httpx.ConnectTimeout(""),
                                   httpx.RemoteProtocolError("")])
def test_an_error_without_text_is_named(error: httpx.HTTPError) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    async def go() -> Failure:
        backend = ServiceBackend("/nowhere.sock", "t")
        await backend.client.aclose()
        backend.client = httpx.AsyncClient(base_url="http://arrowgate",
                                           transport=httpx.MockTransport(handler))
        try:
            await backend.holds()
        except Failure as exc:
            return exc
        finally:
            await backend.aclose()
        raise AssertionError("no failure")

    failure = asyncio.run(go())
    message = str(failure)
    assert failure.exit_code == 2
    assert not message.rstrip().endswith(":"), message
    assert type(error).__name__ in message or "no answer" in message, message
