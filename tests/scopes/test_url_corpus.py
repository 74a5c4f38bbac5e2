"""A corpus of bad URLs, each with its exact refusal; a loopback listener counts 0 connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from engine import ApprovalRefused, Engine, World
from engine.effects.netguard import FetchResponse, GuardedFetch
from engine.effects.transport import HttpxTransport

from ..conftest import manifest, offer_install

PD, HND, PH, BU = "private-address", "host-not-declared", "plain-http", "bad-url"

# Hosts under *.example.com and what the case's resolver says they are.
DNS = {
    "public.example.com": ["93.184.216.34"], "loop.example.com": ["127.0.0.1"],
    "loop2.example.com": ["127.8.9.10"], "ten.example.com": ["10.0.0.1"],
    "rfc1918b.example.com": ["172.20.1.1"], "rfc1918c.example.com": ["192.168.0.10"],
    "meta.example.com": ["169.254.169.254"], "linklocal.example.com": ["169.254.10.10"],
    "cgnat.example.com": ["100.64.1.1"], "alimeta.example.com": ["100.100.100.200"],
    "zero.example.com": ["0.0.0.0"], "bcast.example.com": ["255.255.255.255"],
    "mcast.example.com": ["224.0.0.251"], "reserved.example.com": ["240.1.2.3"],
    "v6loop.example.com": ["::1"], "v6zero.example.com": ["::"],
    "mapped.example.com": ["::ffff:127.0.0.1"], "mapped10.example.com": ["::ffff:10.1.1.1"],
    "compat.example.com": ["::127.0.0.1"], "nat64.example.com": ["64:ff9b::7f00:1"],
    "nat64meta.example.com": ["64:ff9b::a9fe:a9fe"], "sixtofour.example.com": ["2002:7f00:1::1"],
    "teredo.example.com": ["2001:0:4136:e378:8000:63bf:80ff:fffe"],
    "ula.example.com": ["fd12:3456::1"], "awsmeta.example.com": ["fd00:ec2::254"],
    "v6ll.example.com": ["fe80::1"], "v6mcast.example.com": ["ff02::1"],
    "mixed.example.com": ["93.184.216.34", "10.0.0.1"],
    "mixed6.example.com": ["2606:4700::1111", "::1"], "doc.example.com": ["192.0.2.1"],
    "bench.example.com": ["198.18.0.1"],
}
BAD_HOSTS = [h for h in DNS if h not in ("public.example.com",)]

CORPUS: list[tuple[str, str]] = [(f"https://{h}/", PD) for h in BAD_HOSTS]
CORPUS += [(f"https://{h}:8443/x", PD) for h in ("loop.example.com", "meta.example.com",
                                                  "mapped.example.com")]
CORPUS += [
    # IP encodings and literals are never declared host names.
    ("https://2130706433/", HND), ("https://0x7f000001/", HND), ("https://017700000001/", HND),
    ("https://127.1/", HND), ("https://0x7f.1/", HND), ("https://0177.0.0.1/", HND),
    ("https://127.0.0.1/", HND), ("https://[::1]/", HND), ("https://[::ffff:127.0.0.1]/", HND),
    ("https://[0:0:0:0:0:ffff:7f00:1]/", HND), ("https://10.0.0.1/", HND),
    ("https://169.254.169.254/latest/meta-data/", HND), ("https://[fd00:ec2::254]/", HND),
    ("https://100.100.100.200/", HND), ("https://0/", HND), ("https://localhost/", HND),
    ("http://localhost:8000/", HND), ("https://LOCALHOST./", HND),
    ("https://metadata.google.internal/", HND), ("https://example.com/", HND),
    ("https://a.b.example.com/", HND), ("https://example.com.evil.net/", HND),
    ("https://public.example.com.evil.net/", HND),
    # Userinfo and backslash tricks.
    ("https://public.example.com@127.0.0.1/", BU), ("https://user:pw@loop.example.com/", BU),
    ("https://public.example.com%2f@evil.net/", BU), ("https://public.example.com\\@evil.net/", BU),
    ("https://@public.example.com/", BU),
    # Plain http and other schemes.
    ("http://public.example.com/", PH), ("HTTP://PUBLIC.EXAMPLE.COM/", PH),
    ("http://loop.example.com/", PH), ("ftp://public.example.com/", BU),
    ("file:///etc/passwd", BU), ("gopher://public.example.com/", BU), ("javascript:alert(1)", BU),
    ("//public.example.com/", BU), ("not a url", BU),
    # Does not resolve.
    ("https://nowhere.example.com/", "unresolved"),
]
# Redirects from a public host to each kind of bad URL are checked again.
REDIRECT_TO = {
    "loop": ("https://loop.example.com/", PD), "meta": ("https://meta.example.com/", PD),
    "mapped": ("https://mapped.example.com/", PD), "nat64": ("https://nat64.example.com/", PD),
    "ip": ("https://127.0.0.1/", HND), "local": ("http://localhost/", HND),
    "undeclared": ("https://evil.net/", HND), "plain": ("http://public.example.com/x", PH),
    "userinfo": ("https://a@public.example.com/", BU), "file": ("file:///etc/passwd", BU),
    "mangled": ("http:/x", BU),
}
CORPUS += [(f"https://public.example.com/r/{name}", reason)
           for name, (_, reason) in REDIRECT_TO.items()]
CORPUS += [("https://public.example.com/loop/0", "too-many-redirects")]


@pytest.fixture
async def listener() -> AsyncIterator[dict]:
    """An HTTP server on loopback that counts every connection it gets."""
    state = {"connections": 0, "port": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        await reader.readuntil(b"\r\n\r\n")
        body = b"x" * state.get("size", 2)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    state["port"] = server.sockets[0].getsockname()[1]
    yield state
    server.close()
    await server.wait_closed()


@pytest.fixture
async def engine(make_engine, tmp_path, listener) -> Engine:
    real = HttpxTransport()
    seen: list[tuple[str, dict]] = []

    def resolver(host: str) -> list[str]:
        # Everything bad would land on our listener if the guard let it through.
        return DNS.get(host, [])

    async def transport(method, url, headers, body, address, **limits):
        seen.append((url, dict(headers)))
        if address.startswith("127.") or address == "::1":
            if "example.com" in url:
                # Only a guard failure gets here: send it to the counting listener.
                host = url.split("/")[2]
                url = url.replace(host, f"{host.split(':')[0]}:{listener['port']}", 1)
            return await real(method, url, headers, body, "127.0.0.1", **limits)
        path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
        if path.startswith("/r/"):
            return FetchResponse(302, "", {"location": REDIRECT_TO[path[3:]][0]})
        if path.startswith("/loop/"):
            n = int(path[6:])
            return FetchResponse(302, "", {"location": f"/loop/{n + 1}"})
        return FetchResponse(200, "public")

    engine = make_engine(world=World(net=GuardedFetch(resolver, transport), fs=None))
    engine.seen = seen  # type: ignore[attr-defined]
    await engine.create_workspace("w1", tmp_path, settings={"reserved_ports": [7777]})
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "*.example.com", "api.github.com"]}}))
    await offer_install(engine, manifest("acme.meta", {"network": {"hosts": [
        "metadata.google.internal"]}}))
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    for card, pkg in (("c1", "acme.net"), ("c2", "acme.meta"), ("c3", "acme.local")):
        await engine.add_node({"id": card, "type": "card", "package": pkg}, workspace="w1")
    return engine


def test_corpus_is_large_enough() -> None:
    """At least 70 bad URLs."""
    assert len(CORPUS) >= 70


@pytest.mark.parametrize("url, reason", CORPUS, ids=[u[:60] for u, _ in CORPUS])
async def test_bad_url(engine: Engine, listener: dict, url: str, reason: str) -> None:
    """The exact refusal, and the loopback listener never sees a connection."""
    d = await engine.call("c1", "net.fetch", None, {"url": url})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", reason), d.message
    assert listener["connections"] == 0


async def test_metadata_names_are_refused_even_when_declared(engine: Engine, listener) -> None:
    """metadata.google.internal is refused whatever it resolves to."""
    d = await engine.call("c2", "net.fetch", None, {"url": "https://metadata.google.internal/"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", PD)
    assert listener["connections"] == 0


async def test_network_local_reaches_the_listener(engine: Engine, listener: dict) -> None:
    """The control: network.local really connects, through httpx, to this computer."""
    port = listener["port"]
    d = await engine.call("c3", "net.fetch", None, {"url": f"http://127.0.0.1:{port}/"})
    assert d.value == {"status": 200, "body": "xx"} and listener["connections"] == 1
    d = await engine.call("c3", "net.fetch", None, {"url": "http://localhost:7777/"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "reserved-port")
    d = await engine.call("c3", "net.fetch", None, {"url": "https://public.example.com/"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", HND)


async def test_size_cap_and_timeout(engine: Engine, listener: dict) -> None:
    """A body over fetch_max_bytes is refused; a silent server times out."""
    listener["size"] = 5000
    # A generous timeout for the size check: on a busy machine 0.3 s could
    # run out before the body's first bytes arrive (then "timeout", not "too-large").
    await engine.set_settings("w1", {"fetch_max_bytes": 1000, "fetch_timeout": 10})
    d = await engine.call("c3", "net.fetch", None,
                          {"url": f"http://127.0.0.1:{listener['port']}/"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "too-large")

    await engine.set_settings("w1", {"fetch_timeout": 0.3})

    done = asyncio.Event()

    async def silent(reader, writer):
        await done.wait()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    d = await engine.call("c3", "net.fetch", None, {"url": f"http://127.0.0.1:{port}/"})
    assert (d.code, d.reason) == ("FETCH_FAILED", "timeout")
    done.set()
    await asyncio.sleep(0.05)
    server.close()
    await server.wait_closed()


async def test_secret_placeholders(engine: Engine) -> None:
    """Filled only for the secret's host over https; the card learns only whether it is set."""
    with pytest.raises(ApprovalRefused):
        await engine.set_secret("GH", "public.example.com", "s3cret", by="agent:a1")
    await engine.set_secret("GH", "public.example.com", "s3cret")
    assert engine.secret_is_set("GH") and not engine.secret_is_set("NOPE")
    seen = engine.seen  # type: ignore[attr-defined]
    d = await engine.call("c1", "net.fetch", None, {
        "url": "https://public.example.com/ok", "headers": {"Authorization": "Bearer {{secret:GH}}"}})
    assert d.value == {"status": 200, "body": "public"}
    assert seen[-1][1]["Authorization"] == "Bearer s3cret"
    for url, headers, why in (
            ("https://ten.example.com/", {"X": "{{secret:GH}}"}, "is not for this host"),
            ("https://public.example.com/", {"X": "{{secret:NOPE}}"}, "is not set")):
        before = len(seen)
        d = await engine.call("c1", "net.fetch", None, {"url": url, "headers": headers})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-placeholder") and why in d.message
        # The refusal never names the secret's own host, nor its value (issue 15 item 18).
        assert "public.example.com" not in d.message and "s3cret" not in d.message
        assert len(seen) == before  # nothing was sent
    d = await engine.call("c3", "net.fetch", None, {"url": "http://localhost:9/",
                                                    "headers": {"X": "{{secret:GH}}"}})
    assert d.reason == "secret-placeholder" and "never sent to this computer" in d.message
    # A redirect to another host does not carry the filled secret along.
    await engine.set_secret("GH2", "public.example.com", "v")
    row_count = len(engine.log_rows())
    await engine.call("c1", "net.fetch", None, {"url": "https://public.example.com/r/undeclared",
                                                "headers": {"X": "{{secret:GH2}}"}})
    assert all("v" != h.get("X") for u, h in seen if "evil" in u)
    assert "s3cret" not in str(engine.log_rows()[row_count:])


async def test_transport_connects_to_the_address_and_keeps_the_host_name() -> None:
    """The request goes to the checked address, with the original host in the Host header."""
    seen: list[bytes] = []

    async def handle(reader, writer):
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    response = await HttpxTransport()("GET", f"http://api.example.org:{port}/p?q=1",
                                      {"X-A": "1"}, None, "127.0.0.1", timeout=2,
                                      max_bytes=100)
    server.close()
    await server.wait_closed()
    assert response.status == 200 and response.body == "ok"
    head = seen[0].decode().lower()
    assert head.startswith("get /p?q=1 http/1.1") and f"host: api.example.org:{port}" in head
