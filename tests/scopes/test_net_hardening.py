"""Issue 15, network items: framing headers and methods (5), one deadline, caps and
abandon on revoke (13), special IPv6 ranges and UTS-46 host names (17), secrets (18).

Servers here listen on 127.0.0.1 only and every one of them ends on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from engine import Engine, World
from engine.core.addresses import address_refused
from engine.core.fetchform import FRAMING_HEADERS
from engine.core.hosts import matches, normalise_host
from engine.effects.netguard import FetchFailed, FetchResponse, GuardedFetch
from engine.effects.transport import BodyDecoder, HttpxTransport
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"


async def _engine(make_engine, net: GuardedFetch, settings: dict | None = None) -> Engine:
    engine = make_engine(world=World(net=net, fs=None))
    # A workspace's folder must exist; these tests touch no file in it.
    folder = str(short_dir("h15-net-"))
    await engine.create_workspace("w1", folder, settings=settings)
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "*.example.com", "api.example.org"]}}))
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    await engine.add_node({"id": "c3", "type": "card", "package": "acme.local"},
                          workspace="w1")
    return engine


def _recording(sent: list, answer: Callable[..., Awaitable[FetchResponse]] | None = None):
    async def transport(method, url, headers, body, address, **limits):
        sent.append((method, url, dict(headers), address))
        if answer is not None:
            return await answer(method, url, headers, body, address, **limits)
        return FetchResponse(200, "ok")
    return transport


# -- item 5: framing headers and methods; transport failures --------------------------

@pytest.mark.parametrize("headers", [
    *({name.title(): "1"} for name in sorted(FRAMING_HEADERS)),
    {"content-LENGTH": "0"}, {"Proxy-Authorization": "Basic x"}, {"Proxy-Connection": "x"},
    {"Content-Length": "5", "Transfer-Encoding": "chunked"}, {"X-A": "1\r\nHost: evil"},
    {"X A": "1"}, {"X-A": "nul\0"}, {"": "x"}, {"X-A": 5},
])
async def test_framing_headers_are_invalid_and_nothing_is_sent(make_engine, headers) -> None:
    """A card may not set framing or routing headers, nor break the head: check 3 refuses."""
    sent: list = []
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], _recording(sent)))
    d = await engine.call("c1", "net.fetch", None,
                          {"url": "https://api.example.org/q?secret=1", "headers": headers})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "headers"), d.message
    assert sent == []
    assert engine.log_rows()[-1]["outcome"] == "denied"


@pytest.mark.parametrize("method", ["TRACE", "trace", "CONNECT", "TRACK", "PROPFIND", "",
                                    "GET /x HTTP/1.1\r\n"])
async def test_only_the_listed_methods(make_engine, method) -> None:
    """TRACE, CONNECT and any other method are INVALID_ARGUMENT, even with a secret header."""
    sent: list = []
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], _recording(sent)))
    await engine.set_secret("TOK", "api.example.org", "s3cret-value")
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://api.example.org/", "method": method,
        "headers": {"Authorization": "Bearer {{secret:TOK}}"}})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "method"), d.message
    assert sent == []


async def test_listed_methods_go_through(make_engine) -> None:
    """GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS are sent."""
    sent: list = []
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], _recording(sent)))
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get"):
        d = await engine.call("c1", "net.fetch", None,
                              {"url": "https://api.example.org/", "method": method})
        assert d.outcome == "ok", d.message
    assert [m for m, *_ in sent] == ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                     "OPTIONS", "GET"]


async def test_every_transport_failure_is_a_logged_fetch_failed(make_engine) -> None:
    """A transport or resolver that raises anything gives FETCH_FAILED, never an exception."""
    async def broken(method, url, headers, body, address, **limits):
        raise RuntimeError(f"boom with {headers.get('Authorization')}")

    def bad_resolver(host: str) -> list[str]:
        raise UnicodeError("label too long")

    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], broken))
    await engine.set_secret("TOK", "api.example.org", "s3cret-value")
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://api.example.org/", "headers": {"Authorization": "{{secret:TOK}}"}})
    assert (d.code, d.reason) == ("FETCH_FAILED", "transport"), d.message
    assert "s3cret-value" not in d.message
    row = engine.log_rows()[-1]
    assert (row["outcome"], row["code"]) == ("denied", "FETCH_FAILED")
    assert "s3cret-value" not in str(engine.log_rows())
    engine.world.net = GuardedFetch(bad_resolver, broken)
    d = await engine.call("c1", "net.fetch", None, {"url": "https://api.example.org/"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "unresolved")


class _Server:
    """A loopback server whose handlers are all finished (and closed) before it stops."""

    def __init__(self, handler) -> None:
        self.handler = handler
        self.tasks: set[asyncio.Task] = set()
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def __aenter__(self) -> _Server:
        async def handle(reader, writer):
            self.tasks.add(asyncio.current_task())  # type: ignore[arg-type]
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()

        self.server = await asyncio.start_server(handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), 30)
        await self.server.wait_closed()


async def test_a_malformed_answer_is_fetch_failed(make_engine) -> None:
    """A server that breaks HTTP makes an h11 error, which ends as FETCH_FAILED."""
    async def garbage(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\nok")
        await writer.drain()

    async with _Server(garbage) as server:
        engine = await _engine(make_engine, GuardedFetch(lambda h: [], HttpxTransport()))
        d = await engine.call("c3", "net.fetch", None,
                              {"url": f"http://127.0.0.1:{server.port}/"})
        assert d.code == "FETCH_FAILED", d.message


# -- item 13: one deadline, caps, abandon ---------------------------------------------

async def test_one_deadline_for_the_whole_fetch(make_engine) -> None:
    """A server trickling a byte every 0.1 s cannot keep a 0.5 s fetch alive."""
    stop = asyncio.Event()

    async def trickle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        for _ in range(100):  # at most 10 s, then the body is complete
            if stop.is_set():
                break
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.1)

    async with _Server(trickle) as server:
        try:
            engine = await _engine(make_engine, GuardedFetch(lambda h: [], HttpxTransport()),
                                   {"fetch_timeout": 0.5})
            d = await engine.call("c3", "net.fetch", None,
                                  {"url": f"http://127.0.0.1:{server.port}/"})
            assert (d.code, d.reason) == ("FETCH_FAILED", "timeout"), d.message
        finally:
            stop.set()


async def test_a_gzip_bomb_stops_at_the_cap(make_engine) -> None:
    """A small gzip body that decodes to 64 MiB is refused at fetch_max_bytes, memory bounded."""
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)

    async def serve_bomb(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % len(bomb) + bomb)
        await writer.drain()

    cap = 1_000_000
    async with _Server(serve_bomb) as server:
        port = server.port
        engine = await _engine(make_engine, GuardedFetch(lambda h: [], HttpxTransport()),
                               {"fetch_max_bytes": cap})
        tracemalloc.start()
        try:
            d = await engine.call("c3", "net.fetch", None,
                                  {"url": f"http://127.0.0.1:{port}/"})
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "too-large"), d.message
        assert peak < 8 * cap, f"decoding held {peak} bytes at once"


def test_body_decoder_bounds_every_step() -> None:
    """The decoder never produces more than the cap plus one byte, whatever one chunk holds."""
    bomb = gzip.compress(b"a" * (32 << 20))
    decoder = BodyDecoder("gzip", 1000)
    with pytest.raises(FetchFailed) as caught:
        decoder.feed(bomb)
    assert caught.value.reason == "too-large" and decoder.size <= 1001
    assert BodyDecoder("", 10).feed(b"plain") == b"plain"
    with pytest.raises(FetchFailed):
        BodyDecoder("br", 10)
    with pytest.raises(FetchFailed):
        BodyDecoder("gzip, gzip", 10)
    ok = BodyDecoder("deflate", 100)
    import zlib
    assert ok.feed(zlib.compress(b"hello")) == b"hello"


@pytest.fixture
async def blocked() -> AsyncIterator[dict[str, Any]]:
    """A transport that waits until released (or cancelled)."""
    state: dict[str, Any] = {"release": asyncio.Event(), "started": asyncio.Event(),
                             "cancelled": False}

    async def transport(method, url, headers, body, address, **limits):
        state["started"].set()
        try:
            await state["release"].wait()
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return FetchResponse(200, "the body")

    state["transport"] = transport
    yield state
    state["release"].set()


@pytest.mark.parametrize("withdraw", ["revoke", "remove-card"])
async def test_a_fetch_in_flight_is_abandoned(make_engine, blocked, withdraw) -> None:
    """Revoked or removed while in flight: the body never reaches the card; logged cancelled."""
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], blocked["transport"]))
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://api.example.org/"}))
    await asyncio.wait_for(blocked["started"].wait(), 30)
    if withdraw == "revoke":
        await engine.revoke("acme.net", "network")
    else:
        await engine.remove_node("c1")
    # The transport is never released: the fetch must end on its own.
    d = await asyncio.wait_for(call, 30)
    assert d.code == "PERMISSION_DENIED" and d.value is None, d.message
    assert d.reason == ("not-granted" if withdraw == "revoke" else "not-connected")
    assert blocked["cancelled"]
    rows = [r for r in engine.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"]) == ("cancelled", "PERMISSION_DENIED")


async def test_a_fetch_that_finishes_after_a_revoke_is_still_withheld(make_engine,
                                                                      blocked) -> None:
    """Even when the answer arrives right after the revoke, the card does not get it."""
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], blocked["transport"]))
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://api.example.org/"}))
    await asyncio.wait_for(blocked["started"].wait(), 30)
    await engine.revoke("acme.net", "network")
    blocked["release"].set()
    d = await asyncio.wait_for(call, 30)
    assert d.code == "PERMISSION_DENIED" and d.value is None


# -- item 17: addresses and host names ------------------------------------------------

@pytest.mark.parametrize("address", [
    "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:a00:1", "::ffff:0:808:808", "3fff::1",
    "3fff:fff::1", "5f00::1", "64:ff9b:1::808:808", "100:0:0:1::1", "::8.8.8.8",
])
def test_special_ipv6_ranges_are_refused(address: str) -> None:
    """SIIT, documentation (3fff::/20), SRv6 (5f00::/16) and other IANA special ranges."""
    assert address_refused(address)


@pytest.mark.parametrize("address", ["2606:4700::1111", "2a00:1450:4001::1", "8.8.8.8",
                                     "64:ff9b::808:808", "4000::1"])
def test_public_addresses_stay_public(address: str) -> None:
    """The control: ordinary public addresses are not refused."""
    assert not address_refused(address)


async def test_special_ipv6_answers_are_private_address(make_engine) -> None:
    """A declared host resolving to a SIIT form of loopback is refused, nothing sent."""
    sent: list = []
    dns = {"siit.example.com": ["::ffff:0:7f00:1"], "doc6.example.com": ["3fff::1"],
           "srv6.example.com": ["5f00::1"]}
    engine = await _engine(make_engine,
                           GuardedFetch(lambda h: dns.get(h, []), _recording(sent)))
    for host in dns:
        d = await engine.call("c1", "net.fetch", None, {"url": f"https://{host}/"})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "private-address"), d.message
    assert sent == []


@pytest.mark.parametrize("url", ["https://a\u3002b.example.com/", "https://a\uff0eb.example.com/",
                                 "https://a\uff61b.example.com/"])
async def test_full_width_dots_do_not_widen_a_pattern(make_engine, url) -> None:
    """After UTS-46, a。b.example.com is two levels below example.com: host-not-declared."""
    sent: list = []
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], _recording(sent)))
    d = await engine.call("c1", "net.fetch", None, {"url": url})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "host-not-declared"), d.message
    assert sent == []


async def test_hosts_are_resolved_and_sent_as_uts46_names(make_engine) -> None:
    """A full-width host name is mapped before matching and resolution; Host gets the ASCII."""
    sent: list = []
    asked: list[str] = []

    def resolver(host: str) -> list[str]:
        asked.append(host)
        return [PUBLIC]

    engine = await _engine(make_engine, GuardedFetch(resolver, _recording(sent)))
    d = await engine.call("c1", "net.fetch", None, {"url": "https://\uff21\uff30\uff29.example.com/"})
    assert d.outcome == "ok", d.message
    assert asked == ["api.example.com"] and sent[0][1] == "https://api.example.com/"
    d = await engine.call("c1", "net.fetch", None, {"url": "https://b\u00fccher.example.com/"})
    assert d.outcome == "ok" and asked[-1] == "xn--bcher-kva.example.com"


def test_host_normalisation() -> None:
    """UTS-46 mapping, and names it refuses match nothing."""
    assert normalise_host("A\u3002B.Example.COM.") == "a.b.example.com"
    assert not matches("*.example.com", "a\u3002b.example.com")
    assert matches("*.example.com", "\uff41.example.com")
    assert not matches("*.example.com", "exa\u200dmple.example.com")
    assert not matches("*.example.com", "%61.example.com")


# -- item 18: secrets -----------------------------------------------------------------

async def test_secret_refusals_never_name_the_secrets_host(make_engine) -> None:
    """Refused placeholders say only set / not set; the value goes to its own host only."""
    sent: list = []
    engine = await _engine(make_engine, GuardedFetch(lambda h: [PUBLIC], _recording(sent)))
    await engine.set_secret("TOK", "private-api.example.com", "s3cret-value")
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://other.example.com/", "headers": {"X-Key": "{{secret:TOK}}"}})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-placeholder")
    assert "private-api" not in d.message and "s3cret" not in d.message
    assert sent == []
    # A full-width spelling of the secret's own host is that host after UTS-46.
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://private-api\uff0eexample.com/", "headers": {"X-Key": "{{secret:TOK}}"}})
    assert d.outcome == "ok" and sent[-1][1] == "https://private-api.example.com/"
    assert sent[-1][2]["X-Key"] == "s3cret-value"
    assert all(h.get("X-Key") != "s3cret-value" for _m, u, h, _a in sent
               if "private-api.example.com" not in u)
