"""``package grant`` and ``package install --grant`` refuse a permission the package does
not declare before a person is asked anything: a name no permission has (a typo) is
invalid input naming the permission meant, exit 2, as ``package revoke`` says it; one the
package does not declare is refused, exit 1, as the engine refuses it.

(Found in round 31, playing a newcomer: `package grant acme.prompter clipbaord.write`
showed "clipbaord.write: not declared by this version", asked "grant clipbaord.write to
acme.prompter? [y/N]", and only a "y" was told APPROVAL_REFUSED … undeclared.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_cli_write import PROMPTER, package, person, run

__all__ = ["person"]  # the fixture, shared


@pytest.fixture
def offered(tmp_path: Path, capsys: pytest.CaptureFixture[str], person: None) -> str:
    """A database where acme.prompter (agents.prompt; clipboard.write optional) is offered."""
    db = str(tmp_path / "ag.db")
    (tmp_path / "proj").mkdir()
    assert run(capsys, "workspace", "add", "w1", str(tmp_path / "proj"), "--db", db)[0] == 0
    assert run(capsys, "package", "offer", str(package(tmp_path, PROMPTER)), "--db", db)[0] == 0
    return db


@pytest.mark.parametrize(("argv", "code", "said"), [
    (["package", "install", "acme.prompter", "--grant", "agents.promt"], 2,
     "no permission 'agents.promt' (did you mean agents.prompt?)"),
    (["package", "install", "acme.prompter", "--grant", "agents.prompt,clipbaord.write"], 2,
     "no permission 'clipbaord.write' (did you mean clipboard.write?)"),
    (["package", "install", "acme.prompter", "--grant", "agents.prompt,network"], 1,
     "acme.prompter does not declare network: undeclared"),
])
def test_install_refuses_a_grant_it_cannot_give_before_asking(
        offered: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str], code: int, said: str) -> None:
    """A --grant naming a permission no package has, or one this one does not declare:
    refused before the review's question, and nothing installed."""
    # WHEN a person who would say yes installs with such a --grant
    got, out, err = run(capsys, *argv, "--db", offered, stdin="y\n",
                        monkeypatch=monkeypatch)
    # THEN it is refused on one line, and no question was asked
    assert (got, err.count("\n")) == (code, 1), (out, err)
    assert said in err and "[y/N]" not in out + err, (out, err)
    # AND nothing was installed: the package's review still offers the install
    assert run(capsys, "package", "install", "acme.prompter", "--db", offered, stdin="n\n",
               monkeypatch=monkeypatch)[0] == 1


@pytest.mark.parametrize(("permission", "code", "said"), [
    ("clipbaord.write", 2, "no permission 'clipbaord.write' (did you mean clipboard.write?)"),
    ("network", 1, "acme.prompter does not declare network: undeclared"),
])
def test_grant_refuses_a_permission_it_cannot_give_before_asking(
        offered: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        permission: str, code: int, said: str) -> None:
    """``package grant`` of a permission no package has, or one this one does not
    declare: refused before anything is asked."""
    # GIVEN the package installed with its required permissions
    assert run(capsys, "package", "install", "acme.prompter", "--db", offered, stdin="y\n",
               monkeypatch=monkeypatch)[0] == 0
    # WHEN a person who would say yes grants such a permission
    got, out, err = run(capsys, "package", "grant", "acme.prompter", permission,
                        "--db", offered, stdin="y\n", monkeypatch=monkeypatch)
    # THEN it is refused on one line, and no question was asked
    assert (got, err.count("\n")) == (code, 1), (out, err)
    assert said in err and "[y/N]" not in out + err, (out, err)
