"""The process the operator check judges for a Unix socket connection is the one that
connected — never another that has its pid since.

Rule (SPEC §4.5, §10.1): consent from a peer inside an agent's process tree is refused,
"seen through the socket's peer credentials", and "the engine fails closed when it cannot
tell". ``SO_PEERCRED`` gives the pid of the process that called ``connect``. An agent's
child can connect, hand the connection to the agent and exit; with pids wrapping around
(32,768 by default) its pid soon belongs to another process — one the service itself
starts (``POST /v1/log/verify`` runs a verifier process as the server's child, outside
every agent's tree) — and the check judged that one. Where the kernel pins the
connecting process (``SO_PEERPIDFD``, Linux 6.5+), a connection whose process has exited
is refused, whatever its pid names now.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import engine.service.auth as auth
from engine.effects.operator import OperatorCheck
from engine.service.auth import agent_verdict, peer_of_socket

_CONNECT_AND_HAND_OVER = """
import socket, sys
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
socket.send_fds(socket.socket(fileno=int(sys.argv[2])), [b"x"], [c.fileno()])
"""


def _pinned() -> bool:
    a, b = socket.socketpair()
    with a, b:
        try:
            os.close(a.getsockopt(socket.SOL_SOCKET, 77))  # SO_PEERPIDFD
        except OSError:
            return False
    return True


@pytest.mark.skipif(not _pinned(), reason="the kernel cannot pin a socket's peer "
                                          "(SO_PEERPIDFD, Linux 6.5+)")
def test_a_connection_whose_process_exited_is_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A child connects, hands the connection over and exits: refused, though its pid (as
    if another process's now) would pass; a live connecting process is judged as ever."""
    # Every pid passes the check here: as if the child's pid were a person's process now.
    judged: list[int] = []

    def passes(pid: int, **_kw: object) -> OperatorCheck:
        judged.append(pid)
        return OperatorCheck(True)

    monkeypatch.setattr(auth, "peer_check", passes)
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    ours, theirs = socket.socketpair()
    with server, ours, theirs:
        child = subprocess.run([sys.executable, "-c", _CONNECT_AND_HAND_OVER, str(path),
                                str(theirs.fileno())], pass_fds=[theirs.fileno()],
                               timeout=30, check=True)
        assert child.returncode == 0
        _msg, fds, _flags, _addr = socket.recv_fds(ours, 1, 1)
        handed = socket.socket(fileno=fds[0])
        conn, _ = server.accept()
        with handed, conn:
            peer = peer_of_socket(conn)
            assert peer.pid is not None and peer.pid != os.getpid()
            why = agent_verdict(peer)
        assert why is not None and "exited" in why, why
        # This process connecting, alive: judged by the check, and passed.
        mine = socket.socket(socket.AF_UNIX)
        mine.connect(str(path))
        conn, _ = server.accept()
        with mine, conn:
            assert agent_verdict(peer_of_socket(conn)) is None
        assert judged[-1] == os.getpid()
