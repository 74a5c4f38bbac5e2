"""Fuzzing manifests (issue 15, evidence): hostile manifests end as `ManifestInvalid`, never
as any other exception, through the parser, the file reader, `Engine.offer` and `install`
(and `offer` refuses a name that is no package name as `InvalidArgument`, reason ``name``).

Run with ``-s`` to see how many examples each test ran and how they ended;
``ARROWGATE_FUZZ_EXAMPLES=N`` sets the examples per test (300 by default).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Engine, World
from engine.core.catalogue import PERMISSIONS
from engine.core.errors import InvalidArgument, ManifestInvalid
from engine.core.manifest import loads_manifest, package_name_problem, parse_manifest
from engine.core.review import install_review

# Strings with what hides or restyles text among ordinary manifest characters.
NASTY = st.text(alphabet=st.sampled_from(list("abz019._-* ") + [
    "\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x9b", "\u202e", "\u2066", "\u200b", "\u200d",
    "\u2028", "\ufeff", "\ud800", "é", "。", "👩"]), max_size=20)
JSON_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | NASTY | st.text())
JSON = st.recursive(JSON_SCALARS, lambda kids: st.lists(kids, max_size=4)
                    | st.dictionaries(NASTY | st.text(), kids, max_size=4), max_leaves=25)
# What a Python caller could pass that JSON never holds.
ODD = (st.sets(st.integers(), max_size=3) | st.binary(max_size=8)
       | st.tuples(st.integers(), NASTY) | st.builds(object) | st.just(float("nan"))
       | st.dictionaries(st.integers(), st.integers(), min_size=1, max_size=2)
       | st.complex_numbers())


def nested(depth: int, kind: str) -> Any:
    """``depth`` levels of lists or dicts, built without recursion."""
    value: Any = 0
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


DEEP = st.builds(nested, st.integers(1, 3000), st.sampled_from(["list", "dict"]))
ANY = JSON | ODD | DEEP
PERMISSION = st.dictionaries(
    st.sampled_from(sorted(PERMISSIONS)) | NASTY,
    st.fixed_dictionaries({}, optional={"optional": st.booleans() | ANY,
                                        "hosts": st.lists(NASTY | st.sampled_from(
                                            ["api.example.com", "*.example.com", "*",
                                             "1.2.3.4", "a。b.example.com"]), max_size=3)
                                        | ANY}), max_size=4)
SCHEMA = st.sampled_from([{"type": "object"}, {"type": "nope"}, {"properties": []},
                          {"pattern": "(("}, {"$ref": "http://x/y"}, True, None]) | ANY
TOOL = (st.sampled_from(["summarize", "a_1", "Bad", "x" * 70]) | NASTY
        | st.fixed_dictionaries({"name": st.sampled_from(["relay", "t"]) | NASTY | ANY},
                                optional={"description": NASTY | ANY, "input": SCHEMA,
                                          "extra": ANY}) | ANY)
MANIFEST = st.fixed_dictionaries(
    {"name": st.sampled_from(["acme.fuzz", "a", "Acme"]) | NASTY | ANY,
     "version": st.sampled_from(["1.0.0", "1", "1.0.0-rc.1"]) | NASTY | ANY,
     "permissions": PERMISSION | ANY},
    optional={"tools": st.lists(TOOL, max_size=4) | ANY,
              "ports": st.fixed_dictionaries({}, optional={"inputs": st.lists(NASTY | ANY,
                                                                             max_size=3),
                                                           "outputs": ANY}) | ANY,
              "extra": ANY})

# Valid manifests, so that install and the review run too.
VALID = st.fixed_dictionaries(
    {"name": st.sampled_from(["acme.fuzz", "a", "b_c-d.e"]),
     "version": st.sampled_from(["1.0.0", "0.1.0-rc.1+b.2"]),
     "permissions": st.dictionaries(st.sampled_from(sorted(
         n for n, p in PERMISSIONS.items() if not p.needs_hosts)),
         st.fixed_dictionaries({}, optional={"optional": st.booleans()}), max_size=4)},
    optional={"tools": st.lists(st.sampled_from(["relay", {"name": "sum", "description":
                                                           "Sums the numbers ✓"},
                                                 {"name": "run", "input": {"type": "object"}}]),
                                max_size=3, unique_by=lambda t: json.dumps(t)),
              "ports": st.fixed_dictionaries({"inputs": st.just(["in"]),
                                              "outputs": st.just(["out"])})})

# ARROWGATE_FUZZ_EXAMPLES=3000 for a longer run by hand.
FUZZ = settings(max_examples=int(os.environ.get("ARROWGATE_FUZZ_EXAMPLES", "300")),
                deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


async def _offer_and_install(raw: Any) -> str:
    engine = Engine.open(None, world=World(net=None, fs=None))
    try:
        name = raw.get("name") if isinstance(raw, dict) and isinstance(raw.get("name"), str) \
            else "acme.fuzz"
        try:
            await engine.offer(name, raw, {"manifest.json": "0" * 64})
        except ManifestInvalid:
            return "offer refused"
        except InvalidArgument as exc:
            # Offered under its manifest's name: only a name that is no package name.
            assert exc.reason == "name" and package_name_problem(name), exc
            return "offer refused"
        try:
            await engine.install(name, grant="all")
        except ManifestInvalid:
            return "install refused"
        review = await engine.review(name)
        assert all("\x1b" not in line and "\n" not in line for line in review.lines)
        return "installed"
    finally:
        engine.close()


def test_parse_manifest_raises_only_manifest_invalid() -> None:
    """The parser, then the review of what passes: no other exception, no control
    character in any line of the review."""
    counts: Counter[str] = Counter()

    @FUZZ
    @given(MANIFEST | VALID | ANY)
    def run(raw: Any) -> None:
        try:
            manifest = parse_manifest(raw)
        except ManifestInvalid as exc:
            assert exc.problems and all(p.startswith("$") for p, _ in exc.problems)
            counts["refused"] += 1
            return
        counts["valid"] += 1
        review = install_review(manifest, "sha256:" + "0" * 64)
        assert all(ch not in "\x1b\n\r\x9b\u202e" for line in review.lines for ch in line)

    run()
    print(f"\nmanifest fuzz, parse_manifest: {dict(counts)}")
    assert counts["refused"] > 50 and counts["valid"] > 10


def test_offer_and_install_raise_only_manifest_invalid() -> None:
    """Through the engine: offer stores, install validates; only ManifestInvalid escapes
    (and InvalidArgument for a name that is no package name)."""
    counts: Counter[str] = Counter()

    @FUZZ
    @given(MANIFEST | VALID | ANY)
    def run(raw: Any) -> None:
        counts[asyncio.run(_offer_and_install(raw))] += 1

    run()
    print(f"\nmanifest fuzz, Engine.offer/install: {dict(counts)}")
    assert counts["offer refused"] and counts["install refused"] and counts["installed"] > 10


def test_reading_manifest_text_raises_only_manifest_invalid_or_value_error() -> None:
    """The file reader: deep JSON is MANIFEST_INVALID, other bad text a ValueError."""
    counts: Counter[str] = Counter()

    @FUZZ
    @given(st.one_of(st.text(max_size=200),
                     st.builds(lambda d, k: "[" * d + k + "]" * d, st.integers(0, 200_000),
                               st.sampled_from(["", "1", '{"a":'])),
                     JSON.map(lambda v: json.dumps(v, allow_nan=True))))
    def run(text: str) -> None:
        try:
            raw = loads_manifest(text)
        except ManifestInvalid:
            counts["too deep"] += 1
            return
        except ValueError:
            counts["not JSON"] += 1
            return
        try:
            parse_manifest(raw)
            counts["valid"] += 1
        except ManifestInvalid:
            counts["refused"] += 1

    run()
    print(f"\nmanifest fuzz, loads_manifest: {dict(counts)}")
    assert counts["too deep"] and counts["not JSON"] and counts["refused"]
