"""The command line's text output names a refusal's ``reason`` (``not-connected``,
``lookalike``, ...) as well as its message, as ``(reason: …)``, for a refused call on
standard output and for a refused verb on standard error, through ``--db`` as through
``--service``; ``--json`` carries it as the ``reason`` member.

Found in round 22: text output printed only the message, so a reason a script or a
person could match on was there only in words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_write import PROMPTER, canvas, package, person, run  # noqa: F401 -- fixtures


def test_a_refused_call_prints_its_reason_once(canvas: Path,  # noqa: F811 -- the fixture
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A Decision's message names its reason already (``…: not-connected — why``): it
    is not said twice."""
    code, out, _ = run(capsys, "call", "c1", "agents.prompt", "a1", "--args",
                       '{"text": "hello"}', "--db", str(canvas))
    assert code == 1
    assert out.count("not-connected") == 1 and ": not-connected —" in out, out


def test_a_refused_verb_prints_its_reason(canvas: Path,  # noqa: F811 -- the fixture
                                          capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    (tmp_path / "twin").mkdir()
    twin = package(tmp_path / "twin", {**PROMPTER, "name": "acme.prornpter"})
    code, _, err = run(capsys, "package", "offer", str(twin), "--db", str(canvas))
    assert code == 2
    assert "(reason: lookalike)" in err, err
    code, _, err = run(capsys, "package", "offer", str(twin), "--db", str(canvas), "--json")
    assert code == 2 and json.loads(err)["error"]["reason"] == "lookalike", err


def test_a_read_verbs_refusal_prints_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from engine.app.cli import _run
    from engine.core.errors import InvalidArgument

    def refuse(_args: argparse.Namespace) -> int:
        raise InvalidArgument("a name a person cannot tell apart", reason="lookalike")

    assert _run(argparse.Namespace(fn=refuse)) == 2
    assert capsys.readouterr().err.rstrip().endswith("(reason: lookalike)")
