"""Port 0 in a fetch's URL is refused as ``bad-url``: no connection can be made to it.

SPEC §8.2: network.local reaches "any port except the app's reserved ports" —
reason ``reserved-port``. A URL naming port 0 is refused before anything else
is checked, and the normal form of a URL keeps every port it names but the
scheme's default, so the port checked is the port connected to.

(Found by a helper: ``host_scope`` checked port 0 of ``http://127.0.0.1:0/``,
then ``normal_url`` dropped the falsy port and the transport connected to the
scheme's default, 80 or 443: a reserved port reached by writing ``:0``.)
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import pytest

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch, normal_url
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install
from .served import serve_canned, start


def _server_on_80() -> socket.socket:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        ls.bind(("127.0.0.1", 80))
    except OSError as exc:
        ls.close()
        if exc.errno in (errno.EACCES, errno.EADDRINUSE, errno.EPERM):
            pytest.skip(f"cannot listen on 127.0.0.1:80 here ({exc.strerror})")
        raise
    serve_canned(ls, b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n"
                     b"Connection: close\r\n\r\nRESERVED")
    return ls


@pytest.mark.parametrize("url", ["http://127.0.0.1:0/", "http://localhost:0/admin"])
def test_port_zero_is_refused_and_never_reaches_a_default_port(tmp_path: Path, url: str) -> None:
    ls = _server_on_80()
    served = start(tmp_path, settings={"reserved_ports": [80]})
    try:
        plain = served.call("net.fetch", {"url": "http://127.0.0.1/"})
        assert (plain["code"], plain["reason"]) == ("SCOPE_REFUSED", "reserved-port")
        d = served.call("net.fetch", {"url": url})
        assert d["outcome"] == "denied" and d["value"] is None, (d["outcome"], d["value"])
        assert (d["code"], d["reason"]) == ("SCOPE_REFUSED", "bad-url"), d["message"]
    finally:
        served.stop()
        ls.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread, frees port 80
        ls.close()


def test_the_normal_url_keeps_every_port_but_the_default() -> None:
    """Only the scheme's default port is dropped; a port the URL names stays."""
    assert normal_url("http://LOCALHOST:0/a") == "http://localhost:0/a"
    assert normal_url("http://localhost:80/a") == "http://localhost/a"
    assert normal_url("https://api.example.com:443/") == "https://api.example.com/"
    assert normal_url("https://api.example.com:80/") == "https://api.example.com:80/"
    assert normal_url("http://[::1]:8080/x") == "http://[::1]:8080/x"


async def test_port_zero_is_refused_before_any_connection(make_engine) -> None:
    """In process (no port 80 needed): ``:0`` is bad-url for http and https, nothing sent."""
    sent: list[str] = []

    async def transport(method, url, headers, body, address, **limits):
        sent.append(url)
        return FetchResponse(200, "RESERVED")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [], transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("port-zero-")))
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.local"},
                          workspace="w1")
    for url in ("http://127.0.0.1:0/", "https://localhost:0/x", "http://[::1]:00/"):
        d = await engine.call("c1", "net.fetch", None, {"url": url})
        assert (d.code, d.reason, d.value) == ("SCOPE_REFUSED", "bad-url", None), d.message
        assert "port 0" in d.message
    assert sent == []
