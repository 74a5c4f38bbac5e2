"""Where ``arrowgate serve`` listens, and its operator token (SPEC §10.1).

The Unix socket is bound here, not by uvicorn (whose ``uds=`` leaves it mode
0666): inside a folder only the user can enter (0700), the socket itself 0600,
with no moment where it is wider. A TCP address is bound here too, so that
the server is handed sockets, never addresses.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import stat
from pathlib import Path

from engine.service.auth import TokenStore, write_secret_file

__all__ = ["address_of", "bind_tcp", "bind_unix", "check_token_path", "default_socket_path",
           "default_token_file", "operator_token"]


def default_socket_path(db: Path) -> Path:
    """``serve.sock`` in the folder ``<database>.serve`` beside the database."""
    return db.with_name(db.name + ".serve") / "serve.sock"


def default_token_file(db: Path) -> Path:
    """The database path plus ``.operator-token``."""
    return db.with_name(db.name + ".operator-token")


def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` (mode 0600) in a folder only we can enter.

    A socket file left by a server that is gone is replaced; one that still
    answers is not.

    Raises:
        SystemExit: the path is too long, the folder is not ours, or another
            server listens there.
    """
    folder = path.parent
    if len(os.fsencode(path)) >= 104:
        raise SystemExit(f"arrowgate: the socket path {path} is too long for a Unix socket "
                         "(use --socket with a shorter path)")
    made = not os.path.lexists(folder)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise SystemExit(f"arrowgate: {folder} is not a folder of this user")
    if made:
        os.chmod(folder, 0o700)  # mkdir's mode is narrowed by the umask, never widened
    elif st.st_mode & 0o022:
        # Never a folder we did not make changed (a project folder, the home
        # folder, /tmp): refused instead when others may write in it, since they
        # could put their own socket in ours' place. One they may only enter is
        # fine: the socket itself is 0600 from birth.
        raise SystemExit(f"arrowgate: {folder} (mode {stat.S_IMODE(st.st_mode):o}) may be "
                         "written in by its group or others: put the socket in a folder only "
                         "you can change (the default beside the database is one)")
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise SystemExit(f"arrowgate: {path} exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            os.unlink(path)  # a server that is gone left it
        else:
            raise SystemExit(f"arrowgate: another server listens on {path}")
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket file is born 0600: no window where it is wider
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def bind_tcp(address: str) -> socket.socket:
    """A listening TCP socket on ``HOST:PORT`` (port 0: any free port).

    HOST is an IP address, or ``localhost`` for 127.0.0.1. Never another name:
    what a name resolves to is the resolver's choice (``/etc/hosts``, DNS; a
    machine's own name often resolves to an address others reach), and the
    service listens on no address the person did not pass (SPEC §10.1).

    Raises:
        SystemExit: the address cannot be parsed or bound, or HOST is a name.
    """
    host, sep, port_text = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not (port_text.isascii() and port_text.isdigit()) or \
            int(port_text) > 65535:
        raise SystemExit(f"arrowgate: --listen takes HOST:PORT, e.g. 127.0.0.1:8377, not "
                         f"{address!r}")
    if host.lower() == "localhost":
        host = "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise SystemExit(f"arrowgate: --listen takes an IP address (or localhost), not the "
                         f"name {host!r}: what a name resolves to is not an address you "
                         "chose; give e.g. 127.0.0.1:8377") from None
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, int(port_text)))
    except (OSError, ValueError, TypeError) as exc:  # a scope id that names no interface
        sock.close()
        raise SystemExit(f"arrowgate: cannot listen on {address}: {exc}") from exc
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def address_of(sock: socket.socket) -> str:
    """What clients connect to: the socket path, or ``http://HOST:PORT``."""
    if sock.family == socket.AF_UNIX:
        return str(sock.getsockname())
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


#: What a token file holds: one token as `TokenStore.mint` makes them, and a newline.
_TOKEN_FILE = re.compile(r"agt_[A-Za-z0-9_-]{20,64}\n?")


def check_token_path(path: Path, *, not_these: tuple[Path, ...] = ()) -> None:
    """Refuse a ``--token-file`` that writing the token would destroy: a folder, one of
    ``not_these`` (the database, the socket), or a file that is not a token file.

    Raises:
        SystemExit: naming the path and what it is.
    """
    try:
        if any(path.resolve() == other.resolve() for other in not_these):
            raise SystemExit(f"arrowgate: --token-file {path} is the server's own database "
                             "or socket: give another path")
    except (OSError, RuntimeError) as exc:  # a loop of links, a folder we may not read
        raise SystemExit(f"arrowgate: --token-file {path}: {exc}") from exc
    folder = path.parent
    tmp_name = f"{path.name}.{os.getpid()}.tmp"  # `write_secret_file` writes it first
    if os.path.isdir(folder) and (not os.access(folder, os.W_OK | os.X_OK) or len(
            os.fsencode(tmp_name)) > os.pathconf(folder, "PC_NAME_MAX")):
        # Known now, not after the database and the token are made.
        raise SystemExit(f"arrowgate: --token-file {path} cannot be written there (the "
                         "folder is not writable, or the name is too long)")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        return  # replaced, never followed (`write_secret_file`)
    if not stat.S_ISREG(st.st_mode):
        raise SystemExit(f"arrowgate: --token-file {path} exists and is not a file")
    if st.st_size == 0:
        return  # nothing to lose (`mktemp`'s file, say)
    try:
        with path.open("rb") as fh:
            head = fh.read(200)
    except OSError as exc:
        raise SystemExit(f"arrowgate: --token-file {path}: {exc.strerror or exc}") from exc
    if not _TOKEN_FILE.fullmatch(head.decode("latin-1")):
        raise SystemExit(f"arrowgate: --token-file {path} exists and holds something else "
                         "than a token: give another path (it is left as it is)")


def operator_token(tokens: TokenStore, path: Path) -> str:
    """The operator token: the one in ``path`` if it is still valid and private, else new.

    A valid operator token found in a file others may read, or that is not
    ours, is revoked as it is replaced: it may have been read.
    """
    exposed: str | None = None
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            token = path.read_text().strip()
            found = tokens.lookup(token)
            if found is not None and found[1].is_operator:
                if st.st_uid == os.getuid() and not st.st_mode & 0o077:
                    return token
                exposed = found[0]
    except (OSError, UnicodeDecodeError):
        pass
    token_id, token = tokens.mint_sync("operator")
    try:
        write_secret_file(path, token + "\n")
    except BaseException:
        tokens.revoke_sync(token_id)  # never a live token nobody was given
        raise
    if exposed is not None:
        tokens.revoke_sync(exposed)  # once its successor is in place
    return token
