"""A card's fetch header that HTTP cannot carry is refused at check 3, before anything is sent.

SPEC §8.1: the headers that frame or route a request (``Host``,
``Content-Length``, ...) give INVALID_ARGUMENT; bad input gets a clear error
and changes nothing. A header name is an HTTP token, whole; a value is
printable ASCII with spaces or tabs only between its characters — what the
engine's HTTP client can write. Anything else used to reach the transport,
which resolved the host and opened a connection, then failed (FETCH_FAILED) or,
for control characters such as ``\\x01`` and ``\\x7f``, put them on the wire.

Found in round 19: the header-name pattern ended in ``$``, which also matches
before a final newline, so ``Host\\n`` and ``Content-Length\\n`` passed the
framing check; and values were checked only for CR, LF and NUL.
"""

from __future__ import annotations

import pytest

from engine import World
from engine.core.fetchform import fetch_args_problem
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"

BAD_HEADERS = [
    {"Host\n": "evil.example.net"}, {"Content-Length\n": "5"},
    {"Transfer-Encoding\n": "chunked"}, {"X-A\n": "1"},
    {"X-A": "a\x01b"}, {"X-A": "a\x7fb"}, {"X-A": "a\x0bb"}, {"X-A": "a\x0cb"},
    {"X-A": " leading"}, {"X-A": "trailing\t"}, {"X-A": "caf\u00e9"}, {"X-A": "\u20ac"},
]


@pytest.mark.parametrize("headers", BAD_HEADERS, ids=repr)
async def test_a_header_http_cannot_carry_is_invalid_and_nothing_is_sent(
        make_engine, headers: dict[str, str]) -> None:
    sent: list[object] = []
    resolved: list[str] = []

    def resolver(host: str) -> list[str]:
        resolved.append(host)
        return [PUBLIC]

    async def transport(method, url, headers, body, address, **limits):
        sent.append((url, dict(headers)))
        return FetchResponse(200, "ok")

    engine = make_engine(world=World(net=GuardedFetch(resolver, transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-hdr-")))
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    d = await engine.call("c1", "net.fetch", None,
                          {"url": "https://api.example.org/", "headers": headers})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "headers"), (d.code, d.message)
    assert sent == [] and resolved == []
    assert engine.log_rows()[-1]["outcome"] == "denied"


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer {{secret:TOK}}"}, {"X-A": ""}, {"X-A": "a\tb c"},
    {"Accept": "text/html, */*;q=0.8"}, {"X-Trace": "!#$%&'*+-.^_`|~"},
], ids=repr)
def test_headers_http_carries_still_pass(headers: dict[str, str]) -> None:
    assert fetch_args_problem({"headers": headers}) is None
