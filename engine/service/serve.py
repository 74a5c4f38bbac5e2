"""``arrowgate serve``: the socket, the operator token, the process (SPEC §10.1).

The Unix socket is bound by `engine.service.listen`, not by uvicorn (whose
``uds=`` leaves it mode 0666): inside a folder only the user can enter
(0700), the socket itself 0600. Each connection on it is told its peer's process
(``SO_PEERCRED``) so consent actions from inside an agent's process tree
can be refused. On SIGTERM, SIGINT or SIGHUP the server stops accepting, lets
the requests in flight finish (every answered call is durable before its answer
goes out), ends event streams and waits, then closes the engine, which
commits whatever is pending (`STOP_SIGNALS`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from engine.service.auth import TokenStore
from engine.service.expected import Expected
from engine.service.idleloop import IdleLoop
from engine.service.listen import (
    address_of,
    bind_tcp,
    bind_unix,
    check_token_path,
    default_socket_path,
    default_token_file,
    operator_token,
)
from engine.service.outbox import Outbox
from engine.service.protocol import http_protocol

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["STOP_SIGNALS", "command", "serve", "stop_signals"]


#: How long an idle keep-alive connection stays open, and how long a request may
#: go without a byte of it arriving before the connection is closed.
KEEP_ALIVE_SECONDS = 60.0

#: How long a connection's answers (or event stream) may stay unsent because its
#: client reads nothing before the connection is dropped (`protocol.SEND_TIMEOUT`).
SEND_TIMEOUT_SECONDS = 60.0


#: The signals that stop the server cleanly, its pending commits flushed. SIGHUP too:
#: the terminal it was started from went away, and SIGHUP's default (die at once)
#: would lose the commits still held; a server meant to outlive its terminal is
#: started under ``nohup``, which ignores SIGHUP, and an ignored one is kept
#: (`stop_signals`). SIGPIPE is not one: Python starts every process with it
#: ignored, so a client gone mid-answer is a failed write on its connection only.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def stop_signals() -> tuple[signal.Signals, ...]:
    """The `STOP_SIGNALS` this process handles: each but one it was started with
    ignored. A POSIX shell starts a background job (``arrowgate serve &`` in a script)
    with SIGINT ignored, so that the terminal's Ctrl-C reaches only the foreground
    command; ``nohup`` ignores SIGHUP. Taking either over would stop the server on
    the very signal it was started to be spared. SIGTERM is always handled: it is how
    a supervisor stops the server, and the one stop that flushes what is pending
    (ignored, only SIGKILL would be left, which loses it)."""
    return tuple(sig for sig in STOP_SIGNALS
                 if sig == signal.SIGTERM or signal.getsignal(sig) is not signal.SIG_IGN)


async def serve(engine: Engine, sock: socket.socket, tokens: TokenStore, *,
                heartbeat: float = 15.0, max_body: int | None = None,
                announce: bool = True, signals: bool = True,
                on_ready: Callable[[Callable[[], None]], None] | None = None,
                log_location: str | None = None) -> None:
    """Serve the engine on ``sock`` until a stop signal, then close it cleanly.

    Args:
        log_location: the engine's SQLite file or PostgreSQL URL, where the log is
            verified by a process of its own (`Service.log_location`).
        announce: print the address, then ``ready``.
        signals: stop on SIGTERM, SIGINT and SIGHUP, but one this process was started
            with ignored (`stop_signals`; only in the main thread).
        on_ready: called once serving, with a function that stops the server
            from any thread (tests and embedding programs).
    """
    import uvicorn

    from engine.service.app import MAX_BODY, Service, asgi_app, fast_lane

    service = Service(engine, tokens, heartbeat=heartbeat, max_body=max_body or MAX_BODY,
                      log_location=log_location)
    app = asgi_app(service)
    loop = asyncio.get_running_loop()
    expected = Expected(loop.time)
    outbox = Outbox(loop, expected)
    expected.before_commit = outbox.release
    lane = fast_lane(app)
    config = uvicorn.Config(app, http=http_protocol(sock.family == socket.AF_UNIX, expected, outbox,
                                                    None if lane is None else lane.take,
                                                    send_timeout=SEND_TIMEOUT_SECONDS),
                            lifespan="off", log_level="warning", access_log=False,
                            # Said, not guessed: the body limit in front hands most
                            # requests on without a coroutine of its own, which
                            # uvicorn's guess would take for ASGI 2 (`BodyLimit`).
                            interface="asgi3",
                            # No proxy in front of a local service: X-Forwarded-*
                            # headers are a client's words, never its address.
                            proxy_headers=False,
                            timeout_graceful_shutdown=10, server_header=False,
                            # A local service: keep idle connections a minute. (uvicorn
                            # types it int; it is only given to call_later.)
                            timeout_keep_alive=KEEP_ALIVE_SECONDS)  # type: ignore[arg-type]

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Our own handlers: stop, end the streams; no re-raised signal afterwards.
            yield

    server = Server(config)

    def stop() -> None:
        server.should_exit = True
        service.closing.set()

    handled = stop_signals() if signals else ()
    for sig in handled:
        loop.add_signal_handler(sig, stop)
    timers_stop = asyncio.Event()
    # A tenth of a second: what other processes do (a hold answered in the TUI, a
    # tool call through another server) reaches this server's event streams.
    timers = loop.create_task(engine.run_timers(timers_stop, every=0.1))
    engine.store.hold_commits(expected)
    # Everything made so far (modules, the app, the engine's state) lives as long
    # as the server: out of the collector's full scans, which would otherwise
    # walk this heap again and again under a burst of calls (see BENCHMARKS.md).
    gc.collect()
    gc.freeze()
    if announce:
        print(address_of(sock), flush=True)
        print("ready", flush=True)
    if on_ready is not None:
        def stop_soon() -> None:
            loop.call_soon_threadsafe(stop)

        on_ready(stop_soon)
    try:
        await server.serve(sockets=[sock])
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        engine.store.hold_commits(None)
        service.close()
        timers_stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await timers
        await engine.aclose()
        tokens.close()


def _named(db: Path | None) -> Path:
    """The database's path, for the files named after it (only a SQLite store has one)."""
    assert db is not None, "with --store, --token-file and --socket or --listen are given"
    return db


def command(args: argparse.Namespace) -> int:
    """``arrowgate serve`` with ``args`` (`engine.service.command.register`'s); its exit code."""
    try:
        return _serve(args)
    except SystemExit as exc:
        if not isinstance(exc.code, str):
            raise
        # A start refused for what it was given (`engine.service.listen`: an address, a
        # socket path, a token file): its one line, and exit 2, invalid input, as every
        # verb's (Python's own exit for such a SystemExit is 1, a finding's code).
        print(exc.code, file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    from engine.app.common import db_path
    from engine.app.madefiles import MadeFiles
    from engine.engine import Engine

    if args.socket and args.listen:
        print("arrowgate: give --socket or --listen, not both", file=sys.stderr)
        return 2
    if args.store:
        from engine.store.pg.store import is_postgres_url

        if args.db:
            print("arrowgate: give --db or --store, not both", file=sys.stderr)
            return 2
        if not is_postgres_url(args.store):
            print("arrowgate: --store takes a postgresql:// URL", file=sys.stderr)
            return 2
        if not args.token_file or not (args.socket or args.listen):
            # No database file to put them beside: the person says where.
            print("arrowgate: with --store, give --token-file and --socket or --listen",
                  file=sys.stderr)
            return 2
        db = None
    else:
        db = db_path(args, create=True, make_folder=False)  # made once nothing refuses
    # (With --store both paths are given: checked above.)
    token_file = Path(args.token_file) if args.token_file else \
        default_token_file(_named(db))
    socket_path = None if args.listen else \
        Path(args.socket) if args.socket else default_socket_path(_named(db))
    # Everything that can be refused is, before anything is made: a start refused
    # leaves no database, token file or token behind.
    check_token_path(token_file, not_these=tuple(p for p in (db, socket_path) if p))
    made = MadeFiles()
    made.folders_for(socket_path)
    # The socket's folders this start makes (the default ``<db>.serve``): removed with
    # the socket when the server stops, as a refused start removes them, so a stopped
    # server leaves only its database and token file behind. Never one it did not make.
    socket_folders = list(made.folders)
    sock = bind_tcp(args.listen) if socket_path is None else bind_unix(socket_path)
    engine: Engine | None = None
    tokens: TokenStore | None = None
    try:
        if socket_path is not None:
            made.files.append(socket_path)
        if db is None:
            engine = Engine.open(store=args.store)
            tokens = TokenStore(engine.store.tokens())
        else:
            made.folders_for(db)
            db.parent.mkdir(parents=True, exist_ok=True)
            if not db.exists():
                made.database = db
            engine = Engine.open(db)
            tokens = TokenStore(db)
        made.folders_for(token_file)
        operator_token(tokens, token_file)
    except BaseException:
        if tokens is not None:
            tokens.close()
        if engine is not None:
            engine.close()
        sock.close()
        made.undo()
        raise
    assert engine is not None and tokens is not None  # made, or raised above
    if args.listen and not address_of(sock).startswith(("http://127.", "http://[::1]")):
        print(f"arrowgate: warning: listening on {address_of(sock)}, not loopback",
              file=sys.stderr)
    print(f"arrowgate: operator token in {token_file}", file=sys.stderr, flush=True)
    unix_path = Path(sock.getsockname()) if sock.family == socket.AF_UNIX else None
    try:
        # A loop that says when it is idle: the store leaves the anchor's committed
        # record for then, after any request already waiting (`engine.service.idleloop`).
        with asyncio.Runner(loop_factory=IdleLoop) as runner:
            runner.run(serve(engine, sock, tokens, heartbeat=args.heartbeat,
                             max_body=args.max_body,
                             log_location=args.store if db is None else str(db)))
    finally:
        if unix_path is not None:
            with contextlib.suppress(OSError):
                if os.path.exists(unix_path):
                    os.unlink(unix_path)
            for folder in reversed(socket_folders):
                # Only an empty one: a file put there meanwhile is someone's.
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
    return 0

