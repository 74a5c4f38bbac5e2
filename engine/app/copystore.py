"""``arrowgate copy``: a whole store, from a SQLite file into an empty PostgreSQL
database (`engine.store.copying`), beside ``arrowgate upgrade``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.app.common import EXIT_OK, CliError, add_db_option, db_path

__all__ = ["register"]


def _cmd_copy(args: argparse.Namespace) -> int:
    from engine.core.text import visible
    from engine.store.copying import copy_to_postgres
    from engine.store.pg.store import is_postgres_url

    if not is_postgres_url(args.to):
        raise CliError("--to takes a postgresql:// URL (a store is copied into an empty "
                       "PostgreSQL database)")
    path = db_path(args)  # read only: a missing file is refused, nothing is made
    report = copy_to_postgres(path, args.to)
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True, separators=(",", ":")))
        return EXIT_OK
    rows = sum(report.tables.values())
    print(visible(f"copied {path} to {report.target}: {rows} rows in "
                  f"{len(report.tables)} tables"))
    print("  " + ", ".join(f"{name} {count}" for name, count in report.tables.items()))
    print(f"  log: {_head(report.log)}; consent history: {_head(report.history)}")
    if report.log is not None:
        print(visible(f"  this machine's anchor: {report.anchor}"))
    return EXIT_OK


def _head(row: Any) -> str:
    return "empty" if row is None else f"{row.seq} rows, newest hash {row.hash[:16]}…"


def register(sub: Any) -> None:
    """Add ``arrowgate copy`` to the command line's subcommands."""
    p = sub.add_parser(
        "copy", help="copy a whole store (canvas, consent, log) into an empty PostgreSQL "
                     "database",
        description="Copy everything the SQLite database holds (workspaces, nodes, "
                    "arrows, packages, grants, held and queued prompts, tool calls, "
                    "tokens, settings, rate windows, the arrow log and the consent "
                    "history with their hash chains) into a PostgreSQL database that "
                    "holds no canvas, in one transaction, and write this machine's "
                    "anchor of it. The source is only read: it must be up to date "
                    "(`arrowgate upgrade`), verify (`arrowgate log verify`) and be open "
                    "in no other program.")
    add_db_option(p)
    p.add_argument("--to", metavar="URL", required=True,
                   help="the PostgreSQL database to copy into (postgresql://…)")
    p.add_argument("--json", action="store_true",
                   help='print {"from", "to", "tables": {table: rows}, "log", "history", '
                        '"anchor"} as JSON')
    p.set_defaults(fn=_cmd_copy)
