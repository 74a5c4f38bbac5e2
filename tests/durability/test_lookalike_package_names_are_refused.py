"""A package whose name a person cannot tell from a known package's is refused (README,
decisions): at offer, when another package offered or installed has a name that differs
from it only in its separators (``.``, ``_``, ``-`` and runs of them, or one at its end)
or in look-alike letters (``0``/``o``, ``1``/``l``, ``rn``/``m``, ``vv``/``w``, ``cl``/``d``),
with ``INVALID_ARGUMENT``, reason ``lookalike``, naming that package; nothing is
stored. An install of such a package (both offered before this rule) is refused the
same way. (Case and other Unicode cannot occur: a name is ``[a-z0-9._-]``.)

Found in round 21: ``acme-standup`` was offered and installed beside the installed
``acme.standup``, and nothing told the person granting it that they were two packages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidRequest
from engine.app.cli import main
from engine.core.lookalike import lookalike, skeleton
from engine.core.manifest import file_digests
from tests.conftest import manifest

KNOWN = "acme.standup"
LOOKALIKES = ["acme-standup", "acme_standup", "acme..standup", "acme.standup-", "acmestandup",
              "acme.stand-up", "acrne.standup", "acme.stanclup"]


def _digests(raw: dict[str, Any]) -> dict[str, str]:
    return file_digests({"manifest.json": json.dumps(raw, sort_keys=True)})


async def _offer(engine: Engine, name: str) -> None:
    raw = manifest(name)
    await engine.offer(name, raw, _digests(raw))


def test_the_skeleton() -> None:
    assert skeleton("acme-standup") == skeleton("acme.standup") == skeleton("acme__standup")
    assert skeleton("acrne.standup") == skeleton("acme.standup")
    assert skeleton("acme.o1") == skeleton("acme.0l")
    assert skeleton("acme.standup") != skeleton("acme.standups")
    assert lookalike("acme-standup", ["x", KNOWN]) == KNOWN
    assert lookalike(KNOWN, [KNOWN]) is None  # the same package: an update
    assert lookalike("acme.standups", [KNOWN]) is None


@pytest.mark.parametrize("name", LOOKALIKES)
@pytest.mark.parametrize("installed", [True, False], ids=["installed", "offered"])
async def test_offer_refuses_a_lookalike_and_stores_nothing(
        make_engine: Any, name: str, installed: bool) -> None:
    engine = make_engine()
    await _offer(engine, KNOWN)
    if installed:
        await engine.install(KNOWN)
    with pytest.raises(InvalidRequest) as err:
        await _offer(engine, name)
    assert err.value.reason == "lookalike"
    assert repr(KNOWN) in str(err.value) and repr(name) in str(err.value)
    assert name not in engine.state.packages
    engine.close()
    assert name not in make_engine().state.packages


@pytest.mark.parametrize("name", ["acme.standups", "acme.5tandup", "acme.sit", "other.standup"])
async def test_names_a_person_tells_apart_are_offered(make_engine: Any, name: str) -> None:
    engine = make_engine()
    await _offer(engine, KNOWN)
    await engine.install(KNOWN)
    await _offer(engine, name)
    await engine.install(name)


async def test_install_refuses_a_lookalike_offered_before(
        make_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.services import consent

    engine = make_engine()
    await _offer(engine, KNOWN)
    monkeypatch.setattr(consent, "lookalike", lambda name, names: None)
    await _offer(engine, "acme-standup")  # as a store of an older version holds it
    monkeypatch.undo()
    await engine.install(KNOWN)
    with pytest.raises(InvalidRequest) as err:
        await engine.install("acme-standup")
    assert err.value.reason == "lookalike"
    assert not engine.state.packages["acme-standup"].installed


def test_the_command_line_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    Engine.open(db).close()
    for name in (KNOWN, "acme-standup"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps(manifest(name)))
    assert main(["package", "offer", str(tmp_path / KNOWN), "--db", str(db)]) == 0
    assert main(["package", "offer", str(tmp_path / "acme-standup"), "--db", str(db)]) != 0
    err = capsys.readouterr().err
    assert "INVALID_ARGUMENT" in err and "looks like" in err and "'acme.standup'" in err
