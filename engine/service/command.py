"""``arrowgate serve``'s arguments: the subcommand as the command line's parser has it.

Apart from the service (`engine.service.serve`), which it imports only when ``serve``
runs: the command line builds every verb's parser for each command it runs, and the
service's imports (uvicorn, its protocol) are wanted by ``serve`` alone.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

__all__ = ["register"]


def _cmd_serve(args: argparse.Namespace) -> int:
    # Here, not at the top: see the module's docstring. Ctrl-C while it imports is
    # "interrupted", exit 130, as in any verb (`engine.app.cli._run`).
    from engine.service.serve import command

    return command(args)


def _positive_seconds(value: str) -> float:
    """An argparse ``type`` for ``--heartbeat``: a finite number of seconds above zero (a
    stream's pings at 0 s would be written in a loop that never yields to the others)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds above 0")
    return seconds


def _positive_bytes(value: str) -> int:
    """An argparse ``type`` for ``--max-body``: a whole number of bytes above zero."""
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of bytes above 0")
    return size


def register(sub: Any) -> None:
    """Add the ``serve`` subcommand to the command line."""
    p = sub.add_parser(
        "serve", help="the local HTTP service (Unix socket by default)",
        description="Serve the engine over local HTTP (SPEC 10.1) to canvas apps in any "
                    "language. It prints its address (the socket's path, or "
                    "http://HOST:PORT), then `ready`; the operator token is in --token-file. "
                    "SIGTERM, SIGINT (Ctrl-C) or SIGHUP (its terminal gone) stops it "
                    "once every pending commit is flushed; SIGINT or SIGHUP ignored when "
                    "it starts (a shell's background job, nohup) stays ignored.",
        epilog="Exit codes: 0 stopped by SIGTERM, SIGINT or SIGHUP once serving; 2 a start refused "
               "(bad arguments, an address or socket another server holds, a token file "
               "that holds anything but a token): nothing is made; 130 interrupted (Ctrl-C) "
               "while it starts.")
    from engine.app.common import add_db_option, given

    add_db_option(p, creates=True)
    p.add_argument("--store", metavar="URL", type=given,
                   help="a shared PostgreSQL store (postgresql://…) instead of --db; needs "
                        "--token-file and --socket or --listen")
    p.add_argument("--socket", metavar="PATH", type=given,
                   help="Unix socket path (default: <db>.serve/serve.sock)")
    p.add_argument("--listen", metavar="HOST:PORT",
                   help="serve loopback TCP instead, e.g. 127.0.0.1:8377 (port 0: any free); "
                        "HOST is an IP address or localhost, never another name")
    p.add_argument("--token-file", metavar="PATH", type=given,
                   help="where the operator token is written (default: <db>.operator-token, "
                        "mode 0600)")
    p.add_argument("--heartbeat", type=_positive_seconds, default=15.0, metavar="SECONDS",
                   help="seconds between event-stream heartbeats (default: 15)")
    p.add_argument("--max-body", type=_positive_bytes, default=None, metavar="BYTES",
                   help="largest request body in bytes (default 8 MiB)")
    p.set_defaults(fn=_cmd_serve)
