"""Out of file descriptors, `arrowgate serve` keeps serving what it has and neither spins nor floods its stderr.

(Found by a hostile test, round 14, when it did not hold: CPython 3.11's accept loop went on after EMFILE (python/cpython#151615): 11.6 MB of tracebacks and 2 s of CPU in 3 s; `IdleLoop` ends the step at the first such failure.)

With more connections waiting than descriptors left, asyncio's accept loop
(CPython 3.11 `BaseSelectorEventLoop._accept_connection`, python/cpython#151615)
does not stop after EMFILE: it keeps calling accept() up to the backlog (2048
from uvicorn), logging a full traceback and scheduling another retry for each,
so the server burns most of a core and writes megabytes of tracebacks a second
for as long as the flood lasts. SPEC §8 (no caller can exhaust the engine) and
the brief: the server should keep serving what it has, pause accepting, and
say so once — not spin.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _cpu(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in ticks


def test_accept_at_the_fd_limit_neither_spins_nor_floods_the_log(tmp_path) -> None:
    err = open(tmp_path / "stderr", "w")
    proc = subprocess.Popen(
        [*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=err, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)))
    conns: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
        port = int(address.rsplit(":", 1)[1])
        kept = socket.create_connection(("127.0.0.1", port))
        conns.append(kept)
        for _ in range(300):
            conns.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(1)
        size0, cpu0 = os.path.getsize(tmp_path / "stderr"), _cpu(proc.pid)
        time.sleep(3)
        cpu = _cpu(proc.pid) - cpu0
        logged = os.path.getsize(tmp_path / "stderr") - size0
        kept.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.settimeout(10)
        assert kept.recv(15) == b"HTTP/1.1 200 OK"  # this part holds
        # Not a timing (no speed is asserted in tests): what the spin wrote. A
        # traceback a second at most, against thousands a second before.
        assert logged < 100_000, f"{logged} bytes of stderr in 3 s (CPU {cpu} ticks)"
    finally:
        for c in conns:
            c.close()
        proc.terminate()
        proc.communicate(timeout=60)
        err.close()
