"""Fuzz evidence (issue 15): URLs and file paths through ``Engine.call`` never raise.

Hypothesis drives ``net.fetch`` with structured and arbitrary URLs, methods and
headers (a resolver and transport that answer every way a network can: private
and special addresses, redirects, exceptions) and the ``fs.*`` calls with
arbitrary paths in a workspace full of links. Whatever comes in, the call
returns a Decision, its code is one of the documented ones, and nothing outside
the workspace is read or changed. Lone surrogates are left to the argument
checks of issue 15 item 4 and are not generated here.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine import Decision, World
from engine.effects.files import ConfinedFiles
from engine.effects.netguard import FetchFailed, FetchResponse, GuardedFetch

from ..conftest import manifest, offer_install

URL_EXAMPLES = 400
PATH_EXAMPLES = 300
#: The engine each fuzz test keeps across its examples, by the fixture that made it.
_ENGINES: dict[tuple[str, int], Any] = {}

_TEXT = st.characters(blacklist_categories=("Cs",))
_FETCH_CODES = {None, "INVALID_ARGUMENT", "SCOPE_REFUSED", "FETCH_FAILED", "PERMISSION_DENIED"}
_FS_CODES = {None, "INVALID_ARGUMENT", "SCOPE_REFUSED", "NOT_FOUND"}
_ADDRESSES = ["93.184.216.34"] * 6 + ["2606:4700::1111"] * 3 + ["10.0.0.1", "127.0.0.1", "::1", "::ffff:0:7f00:1", "3fff::1",
              "5f00::1", "169.254.169.254", "2606:4700::1111", "64:ff9b::a00:1", "fe80::1%eth0",
              "not-an-address", ""]


def _pick(text: str, options: list[Any]) -> Any:
    return options[int(hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(), 16)
                   % len(options)]


_ASKED = itertools.count()


def _resolver(host: str) -> list[str]:
    # Varies from call to call, so a fixed host meets every kind of answer.
    first = _pick(f"{host}{next(_ASKED)}", _ADDRESSES)
    if first == "":
        return []
    return [first, _pick(host + "2", [first] * 3 + _ADDRESSES)]


async def _transport(method: str, url: str, headers: dict[str, str], body: str | None,
                     address: str, **limits: Any) -> FetchResponse:
    kind = _pick(url + method, ["ok", "redirect", "bad-redirect", "raise", "fail", "huge"])
    if kind == "redirect":
        return FetchResponse(302, "", {"location": _pick(url, [
            "/next", "https://public.example.com/x", "http://public.example.com/",
            "https://127.0.0.1/", "//evil.net/", "https://a\u3002b.example.com/"])})
    if kind == "bad-redirect":
        return FetchResponse(301, "", {"location": "https://[::1/"})
    if kind == "raise":
        raise ValueError(f"transport bug for {headers}")
    if kind == "fail":
        raise FetchFailed("connect", "refused")
    return FetchResponse(200, "x" * (10 if kind == "ok" else 100))


_GOOD_HOSTS = st.sampled_from(["public.example.com", "api.example.org", "a.example.com",
                               "\uff41pi.example.com", "b\u00fccher.example.com",
                               "xn--bcher-kva.example.com", "localhost", "127.0.0.1", "[::1]"])
_ODD_HOSTS = st.one_of(
    st.sampled_from(["a.b.example.com", "a\u3002b.example.com", "[::ffff:0:7f00:1]",
                     "metadata.google.internal", "example.com.", "%61.example.com", "0x7f.1",
                     "[fe80::1%25eth0]", ""]),
    st.text(_TEXT, max_size=20).map(lambda s: s + ".example.com"),
    st.text(_TEXT, max_size=30))
_HOSTS = st.tuples(st.integers(0, 9), _GOOD_HOSTS, _ODD_HOSTS).map(
    lambda t: t[1] if t[0] < 7 else t[2])


def _usually(good: Any, odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` seven times in ten, else a draw from ``odd``."""
    return st.tuples(st.integers(0, 9), odd).map(lambda t: good if t[0] < 7 else t[1])


_BUILT_URLS = st.builds(
    lambda scheme, user, host, port, path: f"{scheme}{user}{host}{port}{path}",
    _usually("https://", st.sampled_from(["http://", "HTTPS://", "ftp://", "", "https:/",
                                          "javascript:"])),
    _usually("", st.sampled_from(["user@", "a:b@", "@"])),
    _HOSTS,
    _usually("", st.sampled_from([":443", ":0", ":99999", ":x", ":8080"])),
    st.one_of(st.just("/"), st.text(_TEXT, max_size=30).map(lambda s: "/" + s),
              st.text(_TEXT, max_size=30).map(lambda s: "?" + s)))
_URLS = st.tuples(st.integers(0, 9), _BUILT_URLS, st.text(_TEXT, max_size=80)).map(
    lambda t: t[1] if t[0] < 8 else t[2])
_GOOD_METHODS = [None, None, None, "GET", "post", "HEAD", "PUT", "DELETE", "OPTIONS"]
# Mostly a method that may be sent, so most examples reach the address checks
# and the transport; otherwise anything at all.
_METHODS = st.tuples(st.integers(0, 9), st.sampled_from(_GOOD_METHODS),
                     st.one_of(st.sampled_from(["TRACE", "CONNECT", "TRACK", ""]),
                               st.text(_TEXT, max_size=12))
                     ).map(lambda t: t[1] if t[0] < 8 else t[2])
_HEADER_VALUES = st.one_of(st.sampled_from(["{{secret:TOK}}", "Bearer {{secret:NOPE}}", "gzip",
                                            "1"]),
                           st.text(_TEXT, max_size=20))
_HEADERS = st.tuples(
    st.integers(0, 9),
    st.dictionaries(st.sampled_from(["Authorization", "X-Key", "Accept", "Accept-Encoding",
                                     "Cookie", "X-Trace"]), _HEADER_VALUES, max_size=3),
    st.dictionaries(st.one_of(st.sampled_from(["Host", "Content-Length", "Transfer-Encoding",
                                               "Proxy-X", "TE"]),
                              st.text(_TEXT, max_size=12)), _HEADER_VALUES, max_size=4),
).map(lambda t: None if t[0] < 4 else t[1] if t[0] < 8 else t[2])


@settings(max_examples=URL_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(url=_URLS, method=_METHODS, headers=_HEADERS,
       body=st.one_of(st.none(), st.text(_TEXT, max_size=20)))
async def test_fuzzed_fetches_never_raise(make_engine, tmp_path, url, method, headers,
                                          body) -> None:
    """Any URL, method and headers: a Decision with a documented code, never an exception."""
    engine = _ENGINES.get(("url", id(make_engine)))
    if engine is None:
        engine = make_engine(world=World(net=GuardedFetch(_resolver, _transport), fs=None))
        await engine.create_workspace("w1", tmp_path)
        await offer_install(engine, manifest("acme.net", {
            "network": {"hosts": ["*.example.com", "api.example.org"]}}))
        await offer_install(engine, manifest("acme.local", {"network.local": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                              workspace="w1")
        await engine.add_node({"id": "c2", "type": "card", "package": "acme.local"},
                              workspace="w1")
        await engine.set_secret("TOK", "public.example.com", "s3cret-value")
        _ENGINES[("url", id(make_engine))] = engine
    args: dict[str, Any] = {"url": url}
    if method is not None:
        args["method"] = method
    if headers is not None:
        args["headers"] = headers
    if body is not None:
        args["body"] = body
    for card in ("c1", "c2"):
        d = await engine.call(card, "net.fetch", None, args)
        assert isinstance(d, Decision)
        event(f"{card} {d.code or d.outcome} {d.reason or ''}")
        assert d.code in _FETCH_CODES, d.message
        assert "s3cret-value" not in d.message
        if d.outcome == "ok":
            assert isinstance(d.value, dict) and set(d.value) == {"status", "body"}


_PIECES = st.one_of(st.sampled_from(["a", "sub", "f.txt", "up", "abs", "in", "..", ".", "/",
                                     "\\", "\0", ".git", "CLAUDE.md", ".env", "pipe", "~",
                                     "C:", "\u2025", "%2e", " ", "self"]),
                    st.text(_TEXT, max_size=6))


@settings(max_examples=PATH_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pieces=st.lists(_PIECES, min_size=1, max_size=6),
       call=st.sampled_from(["fs.readText", "fs.readBytes", "fs.stat", "fs.list",
                             "fs.writeText", "fs.mkdir", "fs.trash"]))
async def test_fuzzed_paths_never_raise_or_touch_outside(make_engine, tmp_path, pieces,
                                                         call) -> None:
    """Any path through any file call: a Decision, and the outside folder unchanged."""
    outside = tmp_path / "outside"
    engine = _ENGINES.get(("path", id(make_engine)))
    if engine is None:
        ws = tmp_path / "ws"
        (ws / "sub").mkdir(parents=True, exist_ok=True)
        (ws / "sub" / "f.txt").write_text("inside")
        outside.mkdir(exist_ok=True)
        (outside / "keep.txt").write_text("OUTSIDE")
        for name, target in (("up", ".."), ("abs", str(outside)), ("in", "sub"),
                             ("self", "self")):
            if not os.path.lexists(ws / name):
                os.symlink(target, ws / name)
        if not os.path.exists(ws / "pipe"):
            os.mkfifo(ws / "pipe")
        engine = make_engine(world=World(net=None, fs=ConfinedFiles(
            data_dir=tmp_path / "data", trash=tmp_path / "trash")))
        await engine.create_workspace("w1", ws)
        await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"},
                              workspace="w1")
        _ENGINES[("path", id(make_engine))] = engine
    path = "".join(pieces)
    args: dict[str, Any] = {"path": path}
    if call == "fs.writeText":
        args["text"] = "x"
    d = await engine.call("c1", call, None, args)
    assert isinstance(d, Decision)
    event(f"{call} {d.code or d.outcome} {d.reason or ''}")
    assert d.code in _FS_CODES, d.message
    assert "OUTSIDE" not in str(d.value)
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "OUTSIDE"

