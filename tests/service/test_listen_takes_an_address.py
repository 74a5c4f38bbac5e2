"""``--listen`` serves loopback TCP; "never another address unless the person passes one
explicitly" (SPEC §10.1).

A host name is not an address the person passed: what it resolves to is up to
the resolver (``/etc/hosts``, DNS), and a machine's own name commonly resolves to
an address others reach (a container's, a LAN's). So ``--listen`` takes an IP
address, or ``localhost``, which means the loopback address itself, never what
a resolver says of it; an address other than loopback, passed explicitly, is
served with a warning naming it.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from engine.service.listen import address_of, bind_tcp

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _names() -> list[str]:
    """Host names that are not ``localhost``: this machine's own, and a made-up one."""
    own = socket.gethostname()
    return [n for n in (own, "arrowgate-test.invalid") if n.lower() != "localhost"]


@pytest.mark.parametrize("name", _names())
def test_a_host_name_is_refused_naming_what_to_give(name: str) -> None:
    """``--listen NAME:PORT`` with a name other than localhost is refused, saying it takes
    an IP address; nothing is bound (this machine's name, here resolving to an address
    of this machine, was bound wherever it resolved)."""
    with pytest.raises(SystemExit) as refused:
        sock = bind_tcp(f"{name}:0")
        sock.close()
    assert "IP address" in str(refused.value) and name in str(refused.value)


def test_localhost_is_the_loopback_address_itself() -> None:
    """``localhost`` binds 127.0.0.1, as the address printed says."""
    sock = bind_tcp("localhost:0")
    try:
        assert address_of(sock).startswith("http://127.0.0.1:")
    finally:
        sock.close()


def test_a_name_given_to_the_command_is_refused_and_creates_nothing(tmp_path) -> None:
    """``arrowgate serve --listen NAME:0``: a one-line refusal, exit status not 0, no
    database or token file left."""
    name = _names()[0]
    try:
        done = subprocess.run([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                               "--listen", f"{name}:0"], capture_output=True, text=True,
                              timeout=30)
    except subprocess.TimeoutExpired as served:
        raise AssertionError(f"--listen {name}:0 was served: {served.stdout!r}") from None
    assert done.returncode != 0, done.stdout
    assert done.stderr.strip().startswith("arrowgate:") and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_explicit_address_other_than_loopback_is_served_with_a_warning(tmp_path) -> None:
    """``--listen 0.0.0.0:0``, passed explicitly, is served (its address printed, then
    ``ready``), with a warning on standard error that it is not loopback."""
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                             "--listen", "0.0.0.0:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=60)
    assert address.startswith("http://0.0.0.0:")
    assert f"warning: listening on {address}, not loopback" in err
