"""The write verbs' ``--service`` takes an address as the rule does
(`engine.core.serviceaddress`), and more strictly: the operator's token goes only to the
service's socket or ``http://`` on loopback, never with a user name, a query or a fragment.

(Found in round 29: ``http://user:pw@127.0.0.1:PORT``, ``…?x`` and ``…#y`` were taken,
the user name sent as HTTP basic credentials in place of the operator's token, the query
and fragment dropped silently.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.app.cli_write import Failure, service_transport


@pytest.mark.parametrize("address,why", [
    ("http://user:pw@127.0.0.1:8123", "user name or password"),
    ("http://127.0.0.1:8123/?x=1", "query"),
    ("http://127.0.0.1:8123#y", "fragment"),
    ("http://example.com:8123", "in clear"),
])
def test_a_write_verbs_service_address_is_refused_naming_it_and_why(
        address: str, why: str) -> None:
    """Exit 2, the address and the reason named, before any connection."""
    with pytest.raises(Failure) as caught:
        service_transport(address)
    assert caught.value.exit_code == 2
    assert address in str(caught.value) and why in str(caught.value)


def test_the_command_refuses_it_before_reading_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate hold list --service http://u:p@127.0.0.1:1`: exit 2, one JSON error."""
    token = tmp_path / "op.token"
    token.write_text("op_x")
    token.chmod(0o600)
    code = main(["hold", "list", "--service", "http://u:p@127.0.0.1:1", "--token-file",
                 str(token), "--json"])
    err = capsys.readouterr().err
    assert code == 2
    error = json.loads(err)["error"]
    assert "user name or password" in error["message"]
    assert "http://u:p@127.0.0.1:1" in error["message"]


def test_a_host_and_port_without_http_is_told_to_be_read_as_a_socket(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--service 127.0.0.1:8123`` (``http://`` left out) is a socket's path, and there is
    none: the error says so and names the address meant, not "No such file" alone."""
    monkeypatch.chdir(tmp_path)
    token = tmp_path / "op.token"
    token.write_text("op_x")
    token.chmod(0o600)
    code = main(["hold", "list", "--service", "127.0.0.1:8123", "--token-file", str(token)])
    err = capsys.readouterr().err
    assert code == 2
    assert "socket" in err and "http://127.0.0.1:8123" in err, err


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_service_address_that_is_no_socket_is_told_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str) -> None:
    """``--service app.db`` (the database, not its service's socket) or a folder: the
    error says it is no socket, not "Connection refused", which reads as a service down."""
    address = tmp_path / "app.db"
    if what == "file":
        address.write_bytes(b"")
    else:
        address.mkdir()
    token = tmp_path / "op.token"
    token.write_text("op_x")
    token.chmod(0o600)
    code = main(["hold", "list", "--service", str(address), "--token-file", str(token)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{address} is a {what}, not a socket" in err, err
