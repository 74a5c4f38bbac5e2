"""``arrowgate copy``: a whole store, from a SQLite file into an empty PostgreSQL
database (`engine.store.copying`) or back, from a PostgreSQL store into a new SQLite
file (`engine.store.copyback`); beside ``arrowgate upgrade``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from engine.app.common import EXIT_OK, CliError, add_db_option, db_path, given

__all__ = ["register"]


def _cmd_copy(args: argparse.Namespace) -> int:
    from engine.core.text import visible
    from engine.store.copyback import copy_to_sqlite
    from engine.store.copying import copy_to_postgres
    from engine.store.pg.store import is_postgres_url

    if args.store:
        if args.db:
            raise CliError("give --db or --store as the source, not both")
        if not is_postgres_url(args.store):
            raise CliError("--store takes a postgresql:// URL")
        if is_postgres_url(args.to):
            raise CliError("--to names a new SQLite file when --store is the source (a store "
                           "is copied between SQLite and PostgreSQL)")
        report = copy_to_sqlite(args.store, Path(args.to).expanduser())
        source = report.source
    else:
        if not is_postgres_url(args.to):
            raise CliError("--to takes a postgresql:// URL (a SQLite store is copied into "
                           "an empty PostgreSQL database; --store URL --to FILE copies back)")
        path = db_path(args)  # read only: a missing file is refused, nothing is made
        report = copy_to_postgres(path, args.to)
        source = str(path)
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True, separators=(",", ":")))
        return EXIT_OK
    rows = sum(report.tables.values())
    print(visible(f"copied {source} to {report.target}: {rows} rows in "
                  f"{len(report.tables)} tables"))
    print("  " + ", ".join(f"{name} {count}" for name, count in report.tables.items()))
    print(f"  log: {_head(report.log)}; consent history: {_head(report.history)}")
    if report.anchor:
        print(visible(f"  anchor: {report.anchor}"))
    return EXIT_OK


def _head(row: Any) -> str:
    return "empty" if row is None else f"{row.seq} rows, newest hash {row.hash[:16]}…"


def register(sub: Any) -> None:
    """Add ``arrowgate copy`` to the command line's subcommands."""
    p = sub.add_parser(
        "copy", help="copy a whole store (canvas, consent, log) between SQLite and an "
                     "empty PostgreSQL database",
        description="Copy everything the store holds (workspaces, nodes, arrows, packages, "
                    "grants, held and queued prompts, tool calls, tokens, settings, rate "
                    "windows, the arrow log and the consent history with their hash "
                    "chains) in one transaction, and anchor the copy: from the SQLite "
                    "database (--db) into a PostgreSQL database that holds no canvas, or "
                    "from a PostgreSQL store (--store) into a new SQLite file. The source "
                    "is only read: it must be up to date, verify (`arrowgate log verify`) "
                    "and be in use by no other program.")
    add_db_option(p)
    p.add_argument("--store", metavar="URL", type=given,
                   help="copy from this PostgreSQL store (postgresql://…) instead of --db")
    p.add_argument("--to", metavar="URL|FILE", required=True, type=given,
                   help="where to copy to: a PostgreSQL database holding no canvas "
                        "(postgresql://…), or with --store a new SQLite file")
    p.add_argument("--json", action="store_true",
                   help='print {"from", "to", "tables": {table: rows}, "log", "history", '
                        '"anchor"} as JSON')
    p.set_defaults(fn=_cmd_copy)
