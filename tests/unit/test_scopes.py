"""Confined files and the guarded fetch: refusals with their reasons, and what works."""

from __future__ import annotations

import os

import pytest

from engine import Engine
from engine.effects.files import ConfinedFiles
from engine.effects.netguard import FetchResponse, GuardedFetch, address_refused
from engine.effects.world import World

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.255.1.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
    "169.254.169.254", "169.254.1.1", "100.64.0.1", "100.100.100.200", "0.0.0.0", "224.0.0.1",
    "240.0.0.1", "255.255.255.255", "::1", "::", "fc00::1", "fd00:ec2::254", "fe80::1",
    "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1", "64:ff9b::a00:1",
    "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe", "not-an-ip",
])
def test_refused_addresses(address: str) -> None:
    """Loopback, private, link-local, CGNAT, metadata and their IPv6 disguises are refused."""
    assert address_refused(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "140.82.112.6", "2606:4700::1111",
                                     "::ffff:93.184.216.34"])
def test_public_addresses_pass(address: str) -> None:
    """Public addresses, including a mapped public IPv4, are allowed."""
    assert not address_refused(address)


@pytest.fixture
async def net_engine(make_engine, tmp_path) -> Engine:
    connections: list[str] = []
    answers = {"https://a.example.com/": FetchResponse(302, "", {"location": "http://a.example.com/x"}),
               "https://b.example.com/": FetchResponse(302, "", {"location": "https://localhost/"}),
               "https://c.example.com/": FetchResponse(200, "hi")}

    def transport(method, url, headers, body, address, **limits):
        connections.append(address)
        return answers.get(url, FetchResponse(404))

    dns = {"a.example.com": ["93.184.216.34"], "b.example.com": ["93.184.216.35"],
           "c.example.com": ["93.184.216.36"], "d.example.com": ["93.184.216.37", "10.0.0.1"]}
    fetch = GuardedFetch(lambda h: dns.get(h, []), transport)
    engine = make_engine(world=World(net=fetch))
    engine.connections = connections  # type: ignore[attr-defined]
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": ["*.example.com"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    return engine


@pytest.mark.parametrize("url, reason", [
    ("https://a.example.com/", "plain-http"),        # redirect to http
    ("https://b.example.com/", "host-not-declared"),  # redirect to this computer
    ("https://d.example.com/", "private-address"),    # one of two addresses is private
    ("https://e.example.com/", "unresolved"),
])
async def test_fetch_refusals_check_every_hop(net_engine: Engine, url: str, reason: str) -> None:
    """Every redirect and every resolved address is checked."""
    d = await net_engine.call("c1", "net.fetch", None, {"url": url})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", reason)


async def test_fetch_connects_to_the_checked_address(net_engine: Engine) -> None:
    """The transport is handed the address that was checked."""
    d = await net_engine.call("c1", "net.fetch", None, {"url": "https://C.example.com./"})
    assert d.value == {"status": 200, "body": "hi"}
    assert net_engine.connections == ["93.184.216.36"]  # type: ignore[attr-defined]


@pytest.fixture
async def fs_engine(make_engine, tmp_path) -> Engine:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print(1)")
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "config").write_text("x")
    (ws / "ID_RSA.pub").write_text("k")
    (tmp_path / "outside.txt").write_text("secret")
    os.symlink("src/a.py", ws / "inside-link")
    os.symlink("../outside.txt", ws / "outside-link")
    os.symlink("loop2", ws / "loop1")
    os.symlink("loop1", ws / "loop2")
    os.symlink("/etc/passwd", ws / "abs-link")
    engine = make_engine(world=World(fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                      trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.mark.parametrize("call, path, code, reason", [
    ("fs.readText", "../x", "SCOPE_REFUSED", "path-escape"),
    ("fs.readText", "src/../../x", "SCOPE_REFUSED", "path-escape"),
    ("fs.readText", "/etc/passwd", "SCOPE_REFUSED", "absolute-path"),
    ("fs.readText", "C:/x", "SCOPE_REFUSED", "absolute-path"),
    ("fs.readText", "src\\a.py", "SCOPE_REFUSED", "bad-path"),
    ("fs.readText", "src/a\0.py", "SCOPE_REFUSED", "bad-path"),
    ("fs.readText", "outside-link", "SCOPE_REFUSED", "path-escape"),
    ("fs.readText", "abs-link", "SCOPE_REFUSED", "path-escape"),
    ("fs.readText", "loop1", "SCOPE_REFUSED", "path-escape"),
    ("fs.readText", ".ssh/config", "SCOPE_REFUSED", "secret-path"),
    ("fs.stat", "ID_RSA.pub", "SCOPE_REFUSED", "secret-path"),
    ("fs.readText", "deep/.ENV.local", "SCOPE_REFUSED", "secret-path"),
    ("fs.readText", "nope/missing.txt", "NOT_FOUND", "missing"),
    ("fs.writeText", ".github/workflows/ci.yml", "SCOPE_REFUSED", "protected-path"),
    ("fs.writeText", ".vscode/settings.json", "SCOPE_REFUSED", "protected-path"),
    ("fs.writeText", "AGENTS.md", "SCOPE_REFUSED", "protected-path"),
    ("fs.readText", "x" * 300, "SCOPE_REFUSED", "bad-path"),
])
async def test_file_refusals(fs_engine: Engine, call: str, path: str, code: str,
                             reason: str) -> None:
    """Each bad path gets the exact refusal, NOT_FOUND only after the scope checks."""
    args = {"path": path, "text": "x"} if call == "fs.writeText" else {"path": path}
    d = await fs_engine.call("c1", call, None, args)
    assert (d.code, d.reason) == (code, reason)


async def test_files_that_stay_inside_work(fs_engine: Engine, tmp_path) -> None:
    """Links inside the folder work; writes are atomic; list leaves out secrets; trash."""
    assert (await fs_engine.call("c1", "fs.readText", None, {"path": "inside-link"})).value == "print(1)"
    assert (await fs_engine.call("c1", "fs.writeText", None,
                                 {"path": "./src/b.py", "text": "x = 1"})).outcome == "ok"
    assert (tmp_path / "ws" / "src" / "b.py").read_text() == "x = 1"
    listing = (await fs_engine.call("c1", "fs.list", None, {"path": "."})).value
    assert ".ssh" not in listing and "ID_RSA.pub" not in listing and "src" in listing
    assert not [n for n in os.listdir(tmp_path / "ws" / "src") if n.endswith(".tmp")]
    assert (await fs_engine.call("c1", "fs.trash", None, {"path": "src/b.py"})).outcome == "ok"
    assert (tmp_path / "trash" / "files" / "b.py").read_text() == "x = 1"
    info = (tmp_path / "trash" / "info" / "b.py.trashinfo").read_text()
    assert f"Path={tmp_path / 'ws' / 'src' / 'b.py'}" in info


async def test_unsafe_workspace_refuses_everything(make_engine, tmp_path) -> None:
    """A workspace that contains the app's data folder refuses every file call."""
    engine = make_engine(world=World(fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe")
