"""A manifest is bounded in everything a person is shown or the engine keeps (SPEC §2).

The number of tools, of ports on each side and of host patterns, the size of each
tool's input schema and of the whole manifest each have a bound (README, decisions):
a manifest past one is refused with ``MANIFEST_INVALID`` naming the bound, at offer and
at install alike, and nothing is stored.

Found in round 21: a manifest with 7,000 tools was offered and installed, and its
review (the TUI's screen, the service's answer) was 14 MB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import ManifestInvalid
from engine.core.manifest import (
    MAX_HOSTS,
    MAX_MANIFEST_BYTES,
    MAX_PORTS,
    MAX_SCHEMA_BYTES,
    MAX_TOOLS,
    file_digests,
    parse_manifest,
)
from tests.conftest import manifest


def _digests(raw: dict[str, Any]) -> dict[str, str]:
    return file_digests({"manifest.json": json.dumps(raw, sort_keys=True)})


def _schema(size: int) -> dict[str, Any]:
    """An input schema of about ``size`` bytes of JSON (valid, safe, all description)."""
    return {"type": "object", "description": "x" * size}


OVER: list[tuple[str, dict[str, Any], str]] = [
    ("tools", manifest("acme.many", tools=[f"t{i}" for i in range(MAX_TOOLS + 1)]),
     f"at most {MAX_TOOLS}"),
    ("inputs", manifest("acme.many", ports={"inputs": [f"p{i}" for i in range(MAX_PORTS + 1)]}),
     f"at most {MAX_PORTS}"),
    ("outputs", manifest("acme.many",
                         ports={"outputs": [f"p{i}" for i in range(MAX_PORTS + 1)]}),
     f"at most {MAX_PORTS}"),
    ("hosts", manifest("acme.many", {"network": {
        "hosts": [f"h{i}.example.com" for i in range(MAX_HOSTS + 1)]}}),
     f"at most {MAX_HOSTS}"),
    ("schema", manifest("acme.many", tools=[{"name": "t", "input": _schema(MAX_SCHEMA_BYTES)}]),
     f"at most {MAX_SCHEMA_BYTES}"),
    ("whole", manifest("acme.many", tools=[
        {"name": f"t{i}", "input": _schema(MAX_SCHEMA_BYTES - 100)}
        for i in range(MAX_MANIFEST_BYTES // MAX_SCHEMA_BYTES + 1)]),
     f"at most {MAX_MANIFEST_BYTES}"),
]


@pytest.mark.parametrize("what, raw, bound", OVER, ids=[o[0] for o in OVER])
def test_past_a_bound_the_manifest_is_invalid_naming_the_bound(
        what: str, raw: dict[str, Any], bound: str) -> None:
    with pytest.raises(ManifestInvalid) as err:
        parse_manifest(raw)
    assert bound in str(err.value), str(err.value)[:300]
    assert len(str(err.value)) < 2000


def test_at_the_bounds_a_manifest_is_valid() -> None:
    parse_manifest(manifest("acme.many", {"network": {
        "hosts": [f"h{i}.example.com" for i in range(MAX_HOSTS)]}},
        tools=[f"t{i}" for i in range(MAX_TOOLS)],
        ports={"inputs": [f"p{i}" for i in range(MAX_PORTS)],
               "outputs": [f"p{i}" for i in range(MAX_PORTS)]}))
    parse_manifest(manifest("acme.many", tools=[{"name": "t", "input": _schema(
        MAX_SCHEMA_BYTES - 100)}]))


@pytest.mark.parametrize("what, raw, bound", OVER, ids=[o[0] for o in OVER])
async def test_offer_refuses_it_and_stores_nothing(
        make_engine: Any, what: str, raw: dict[str, Any], bound: str) -> None:
    engine = make_engine()
    with pytest.raises(ManifestInvalid) as err:
        await engine.offer("acme.many", raw, _digests(raw))
    assert bound in str(err.value)
    assert "acme.many" not in engine.state.packages
    engine.close()
    again = make_engine()
    assert "acme.many" not in again.state.packages


async def test_an_update_past_a_bound_is_refused(make_engine: Any) -> None:
    engine = make_engine()
    raw = manifest("acme.many")
    await engine.offer("acme.many", raw, _digests(raw))
    await engine.install("acme.many")
    big = manifest("acme.many", tools=[f"t{i}" for i in range(MAX_TOOLS + 1)])
    with pytest.raises(ManifestInvalid) as err:
        await engine.update("acme.many", manifest=big, digests=_digests(big))
    assert f"at most {MAX_TOOLS}" in str(err.value)
    assert not engine.state.packages["acme.many"].is_pending


def test_the_command_line_offer_refuses_it(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(OVER[0][1]))
    db = tmp_path / "cli.db"
    Engine.open(db).close()
    assert main(["package", "offer", str(folder), "--db", str(db)]) != 0
    out = capsys.readouterr()
    assert "MANIFEST_INVALID" in out.err and f"at most {MAX_TOOLS}" in out.err
    assert len(out.err) < 4000
