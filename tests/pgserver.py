"""A throwaway PostgreSQL server for the tests and CI, from the machine's packages.

``initdb`` into a temporary folder, then ``pg_ctl start`` listening only on a
Unix socket in that folder (no TCP port, so nothing else on the machine can
reach it or collide with it), and ``pg_ctl stop`` at the end. PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres`` user
(or ``nobody``) and the folder is handed to that user.

Used by the pytest fixture ``pg_dsn`` (tests/pgfixtures.py) and, through
``.ci/pg``, by ``.ci/run``::

    python3 tests/pgserver.py start [--install] FOLDER   # prints the DSN
    python3 tests/pgserver.py stop FOLDER

It uses the standard library only, so CI can start the server before the
virtual environment exists.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PgServer", "PgServerError", "find_binaries", "install_postgres"]

#: The superuser initdb creates, whoever runs the server; the DSN names it.
SUPERUSER = "postgres"
#: Seconds pg_ctl waits for the server to accept connections or to stop.
WAIT_S = 60
#: Where Debian installs each major version's server programs.
DEBIAN_BINDIRS = "/usr/lib/postgresql/*/bin"


class PgServerError(RuntimeError):
    """The throwaway server could not be found, installed, started or stopped."""


@dataclass(frozen=True)
class Binaries:
    """The server programs of one installation."""

    initdb: Path
    pg_ctl: Path


def _version_key(bindir: str) -> tuple[int, ...]:
    # /usr/lib/postgresql/15/bin -> (15,): the newest major version wins.
    part = Path(bindir).parent.name
    return tuple(int(x) for x in part.split(".") if x.isdigit()) or (0,)


def find_binaries() -> Binaries | None:
    """initdb and pg_ctl of one installation, or None when PostgreSQL is not installed.

    ``initdb`` on PATH first (/usr/local/bin has wrappers on this project's
    machines); its real folder (symlinks resolved) must hold ``pg_ctl`` too, so
    both come from the same version. Then Debian's versioned folders, newest first.
    """
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    candidates += [Path(d) for d in sorted(glob.glob(DEBIAN_BINDIRS), key=_version_key,
                                           reverse=True)]
    for bindir in candidates:
        initdb, pg_ctl = bindir / "initdb", bindir / "pg_ctl"
        if os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK):
            return Binaries(initdb, pg_ctl)
    return None


def install_postgres() -> Binaries:
    """Install Debian's ``postgresql`` package (as root) and return its programs.

    Raises:
        PgServerError: not root, no apt-get, or the installation failed.
    """
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise PgServerError("PostgreSQL is not installed and cannot be installed here "
                            "(needs root and apt-get): apt-get install -y postgresql")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"]):
        done = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise PgServerError(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}"
                                f"{done.stderr[-2000:]}")
    found = find_binaries()
    if found is None:
        raise PgServerError("apt-get installed postgresql but initdb/pg_ctl were not found "
                            f"on PATH or in {DEBIAN_BINDIRS}")
    return found


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server: None for the current user, else a non-root account (as root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PgServerError("running as root, and neither a 'postgres' nor a 'nobody' user "
                        "exists to run the server as (PostgreSQL refuses root)")


class PgServer:
    """One throwaway server whose data and socket live in ``folder``.

    ``folder`` holds ``data/`` (the cluster), ``server.log`` and the socket
    file itself, so the DSN is ``postgresql:///postgres?host=FOLDER&user=postgres``.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).absolute()
        self.data = self.folder / "data"
        self.logfile = self.folder / "server.log"

    @property
    def dsn(self) -> str:
        """The libpq URI of the server's ``postgres`` database, over the Unix socket."""
        return f"postgresql:///postgres?host={self.folder}&user={SUPERUSER}"

    def _run(self, argv: list[str], user: pwd.struct_passwd | None,
             what: str) -> subprocess.CompletedProcess[str]:
        # subprocess changes user itself (no su/runuser needed): setgid, then
        # setuid, with no supplementary groups left over from root.
        kwargs: dict[str, object] = {}
        if user is not None:
            kwargs = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8",
               "LANG": "C.UTF-8", "TZ": "UTC"}
        done: subprocess.CompletedProcess[str] = subprocess.run(
            argv, env=env, cwd=self.folder, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, check=False, **kwargs)  # type: ignore[call-overload]
        if done.returncode != 0:
            log = ""
            if self.logfile.exists():
                log = "\nserver.log:\n" + self.logfile.read_text(errors="replace")[-3000:]
            raise PgServerError(f"{what} failed ({done.returncode}): "
                                f"{done.stdout[-2000:]}{done.stderr[-2000:]}{log}")
        return done

    def start(self, *, install: bool = False) -> str:
        """initdb and start the server; returns the DSN.

        Args:
            install: install Debian's package when PostgreSQL is missing
                (CI does; a local pytest run does not install system packages).

        Raises:
            PgServerError: PostgreSQL is missing, or initdb or the start failed.
        """
        binaries = find_binaries()
        if binaries is None:
            if not install:
                raise PgServerError("PostgreSQL is not installed (no initdb on PATH or in "
                                    f"{DEBIAN_BINDIRS}): apt-get install -y postgresql")
            binaries = install_postgres()
        # A socket path longer than this does not fit in sockaddr_un.
        if len(str(self.folder / ".s.PGSQL.5432")) > 107:
            raise PgServerError(f"the folder path is too long for a Unix socket: {self.folder}")
        user = _server_user()
        self.folder.mkdir(parents=True, exist_ok=True)
        if any(self.folder.iterdir()):
            raise PgServerError(f"the folder is not empty: {self.folder}")
        if user is not None:
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            probe = subprocess.run(["test", "-w", str(self.folder)], user=user.pw_uid,
                                   group=user.pw_gid, extra_groups=[], check=False)
            if probe.returncode != 0:
                raise PgServerError(f"user {user.pw_name} cannot reach {self.folder} "
                                    "(a parent folder is closed to it): use a folder "
                                    "under /tmp")
        self._run([str(binaries.initdb), "-D", str(self.data), "-U", SUPERUSER,
                   "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"], user, "initdb")
        options = " ".join([
            "-c listen_addresses=''",  # no TCP at all: only the socket below
            f"-c unix_socket_directories='{self.folder}'",
            # fsync only protects against the machine itself crashing; a
            # killed server process loses nothing without it (the WAL is in
            # the kernel). synchronous_commit stays on, as the engine wants.
            "-c fsync=off",
            "-c max_connections=200",
        ])
        self._run([str(binaries.pg_ctl), "start", "-D", str(self.data), "-l",
                   str(self.logfile), "-w", "-t", str(WAIT_S), "-o", options], user,
                  "pg_ctl start")
        return self.dsn

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server (fast shutdown) if it runs, then remove the folder.

        Safe to call when the server never started or is already stopped.
        """
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():
            binaries = find_binaries()
            if binaries is None:
                raise PgServerError("cannot stop the server: pg_ctl is gone")
            self._run([str(binaries.pg_ctl), "stop", "-D", str(self.data), "-m", "fast",
                       "-w", "-t", str(WAIT_S)], _server_user(), "pg_ctl stop")
        if remove:
            shutil.rmtree(self.folder, ignore_errors=True)


def temp_folder() -> Path:
    """A new empty folder under /tmp, short enough for a socket path and open to any user."""
    return Path(tempfile.mkdtemp(prefix="arrowgate-pg-", dir="/tmp"))


def main(argv: list[str] | None = None) -> int:
    """``start [--install] FOLDER`` prints the DSN; ``stop FOLDER`` stops and removes it."""
    parser = argparse.ArgumentParser(prog="pgserver", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="initdb into FOLDER and start; prints the DSN")
    start.add_argument("--install", action="store_true",
                       help="install Debian's postgresql package when missing")
    start.add_argument("folder", type=Path)
    stop = sub.add_parser("stop", help="stop the server in FOLDER and remove FOLDER")
    stop.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    server = PgServer(args.folder)
    try:
        if args.command == "start":
            try:
                print(server.start(install=args.install))
            except PgServerError:
                server.stop()  # a half-started server must not outlive the failure
                raise
        else:
            server.stop()
    except PgServerError as exc:
        print(f"pgserver: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
