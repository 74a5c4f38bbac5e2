"""A fetch URL with a control character is refused (``bad-url``) before anything is resolved or sent.

SPEC §8.1 and the house rule that bad input gets a clear error and changes
nothing. URL parsing drops tabs and line breaks anywhere in a URL, so
``https://api.exa\\nmple.org/`` was fetched from ``api.example.org`` while
the log showed a URL broken over two lines; other control characters
(``\\x00``, ``\\x7f``) passed the scope check, the host was resolved, and the
HTTP client then refused the URL (FETCH_FAILED). The same holds for a URL a
server redirects to.

Found in round 19: the scope check looked at user information and
backslashes, not at control characters.
"""

from __future__ import annotations

import pytest

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"
BAD = ["https://api.exa\nmple.org/", "https://api.example.org/a\tb", "https://api.example.org/\r",
       "https://api.example.org/\x00", "https://api.example.org/?q=\x01",
       "https://api.example.org/\x7f", "https://api.example.org/\x1b[2J"]


async def _engine(make_engine, location: str | None = None):
    resolved: list[str] = []
    sent: list[str] = []

    def resolver(host: str) -> list[str]:
        resolved.append(host)
        return [PUBLIC]

    async def transport(method, url, headers, body, address, **limits):
        sent.append(url)
        if location is not None and url.endswith("/start"):
            return FetchResponse(302, "", {"location": location})
        return FetchResponse(200, "ok")

    engine = make_engine(world=World(net=GuardedFetch(resolver, transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-ctl-")))
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    return engine, resolved, sent


@pytest.mark.parametrize("url", BAD, ids=repr)
async def test_a_card_url_with_a_control_character_is_bad_url(make_engine, url: str) -> None:
    engine, resolved, sent = await _engine(make_engine)
    d = await engine.call("c1", "net.fetch", None, {"url": url})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "bad-url"), (d.code, d.message)
    assert resolved == [] and sent == []


@pytest.mark.parametrize("location", BAD, ids=repr)
async def test_a_redirect_with_a_control_character_is_bad_url(make_engine,
                                                              location: str) -> None:
    engine, _resolved, sent = await _engine(make_engine, location)
    d = await engine.call("c1", "net.fetch", None, {"url": "https://api.example.org/start"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "bad-url"), (d.code, d.message)
    assert sent == ["https://api.example.org/start"]
