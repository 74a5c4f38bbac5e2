"""No refusal of a fetch quotes a secret's value, whatever URL a server redirects to.

SPEC §8.1: a refusal never tells the card anything about a secret but
whether it is set. A server holding the secret (it was sent in a header) may
put it into the URL it redirects to; when that URL is refused (not a URL,
undeclared host), the refusal's text quotes the URL — and so the secret, in
the card's answer and in the log.

Found in round 19: transport failures were redacted, but the scope check's
refusal of a redirect's URL was passed on as it was.
"""

from __future__ import annotations

import pytest

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"
SECRET = "s3cret-value-r19"


@pytest.mark.parametrize("location", [
    "https://api.example.org:99999/?k={secret}",      # not a URL: bad-url quotes it whole
    "https://{secret}.example.net/",                   # undeclared: the host is quoted
    "ftp://api.example.org/{secret}",                  # another scheme
])
async def test_a_redirect_carrying_the_secret_is_refused_without_it(make_engine,
                                                                    location: str) -> None:
    async def transport(method, url, headers, body, address, **limits):
        # The server reflects what it was given.
        return FetchResponse(302, "", {"location": location.format(
            secret=headers["Authorization"])})

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-secret-")))
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    await engine.set_secret("TOK", "api.example.org", SECRET)
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://api.example.org/", "headers": {"Authorization": "{{secret:TOK}}"}})
    assert d.code == "SCOPE_REFUSED", (d.code, d.value)
    assert SECRET not in d.message, d.message
    assert SECRET not in str(engine.log_rows())
