"""The ``arrowgate`` command line (SPEC §10).

Every verb follows the same rules, documented in the README:

- exit codes: 0 ok; 1 a finding (a log that fails verification, a diff that
  widens, a replay with failures, a refusal); 2 a usage error or invalid input
  (bad arguments, an invalid manifest, case file or database file); 130
  interrupted (Ctrl-C);
- errors go to standard error as one line, data to standard output;
- ``--db FILE`` means the same everywhere (`db_path`): verbs that read refuse
  a file that does not exist, and create neither it nor any folder; only the
  verbs that build (``demo``, ``import``, and ``serve``) create it.

More verbs plug in through the ``arrowgate.cli`` entry-point group: each entry
point is a function ``register(subparsers)`` that adds its subcommands with
``set_defaults(fn=...)``; `add_db_option` and `db_path` give them the same
``--db``. The TUI registers ``tui`` this way, so `engine` never imports it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from engine.app.common import (
    EXIT_FINDING,
    EXIT_OK,
    EXIT_USAGE,
    UNUSABLE_STORE,
    CliError,
    add_db_option,
    arrowgate_version,
    db_path,
    default_db_path,
    given,
    text_argument,
    with_reason,
)
from engine.app.streams import (
    ReaderGoneOutput,
    escape_unencodable,
    fill_closed_streams,
    reader_gone,
)
from engine.app.times import TIME_HELP, format_local, parse_time
from engine.app.usage import Parser, UsageError, asks_json
from engine.core.errors import (
    CaseInvalid,
    ConsentError,
    InvalidRequest,
    ManifestInvalid,
    StoreFailed,
)
from engine.store.logfilter import LOG_OUTCOMES

if TYPE_CHECKING:
    from engine.store.view import StoreView

__all__ = [
    "CliError",
    "EXIT_FINDING",
    "EXIT_OK",
    "EXIT_USAGE",
    "LOG_OUTCOMES",
    "UsageError",
    "add_db_option",
    "build_parser",
    "db_path",
    "default_db_path",
    "interactive",
    "main",
    "reader_gone",
]

#: What an awaited import answers (`_said_how`).
T = TypeVar("T")



def _since_until(value: str) -> float:
    """An argparse type: ``10m``, ``2h``, ISO (local time unless it says) or epoch seconds."""
    try:
        return parse_time(value.strip(), time.time(), naive="local")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _read_manifest(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    raw, _text, digests = read_manifest_source(path)
    return raw, digests


def read_manifest_source(path: str) -> tuple[dict[str, Any], bytes | str, dict[str, str]]:
    """A manifest file or package folder a person named: its manifest as a value, the
    ``manifest.json`` text (what `Engine.offer` takes, hashing it itself) and every
    file's digest.

    Raises:
        CliError: the file is no JSON object.
        ManifestInvalid, FileRefused: as `read_package_folder`.
    """
    from engine.core.manifest import file_digests, loads_manifest
    from engine.effects.packages import read_package_folder
    from engine.effects.userfile import read_user_text

    p = Path(path)
    if p.is_dir():
        package = read_package_folder(p)
        return package.manifest, package.manifest_text, package.digests
    text = read_user_text(p)  # a FIFO or device: FileRefused, never a blocking read
    try:
        raw = loads_manifest(text)  # too deep: MANIFEST_INVALID, never RecursionError
    except ValueError as exc:
        raise CliError(f"cannot read manifest {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise CliError(f"manifest {path}: a manifest is a JSON object")
    return raw, text, file_digests({"manifest.json": text})


def _read_canvas_file(path: str) -> Any:
    """A JSON Canvas document from a file a person names; any problem is one `CliError` line.

    Within `MAX_CANVAS_TEXT` bytes and `MAX_CANVAS_VALUES` JSON values, both told before
    the text is read: a few megabytes of empty objects would build millions of them.
    """
    from canvas.jsoncanvas import MAX_CANVAS_TEXT, MAX_CANVAS_VALUES
    from engine.core.jsoncount import TooManyValues, refuse_many_values
    from engine.core.uniquekeys import loads_unique
    from engine.effects.userfile import read_user_text
    from engine.service.jsonread import loads

    # A FIFO or device: FileRefused, never a blocking read.
    text = read_user_text(path, limit=MAX_CANVAS_TEXT)
    try:
        refuse_many_values(text, MAX_CANVAS_VALUES, "a canvas file")
        # Strictly, as the service reads a request: NaN, Infinity, a number past a
        # double (1e999), a lone surrogate and nesting past 1,024 levels are not JSON.
        value = loads(text, strict=True)
        # And each key once (read again: orjson keeps a repeated key's last value
        # silently); within 1,024 levels, so this reading recurses safely.
        loads_unique(text)
    except TooManyValues as exc:
        raise CliError(f"cannot read {path}: it {exc}") from None
    except ValueError as exc:
        raise CliError(f"cannot read {path}: {exc}") from None
    return value


def _print_json(value: Any, *, indent: int | None = None) -> None:
    print(json.dumps(value, indent=indent, sort_keys=indent is None, default=str,
                     separators=None if indent else (",", ":")))


# -- verbs -------------------------------------------------------------------------------


def _cmd_replay(args: argparse.Namespace) -> int:
    from engine.app.replay import run_files

    # run_files already says 2 for an invalid case file (after playing the others).
    return run_files(args.cases, as_json=args.json, store=args.store)


def _cmd_review(args: argparse.Namespace) -> int:
    from engine.core.manifest import content_hash, parse_manifest
    from engine.core.review import install_review

    raw, digests = _read_manifest(args.manifest)
    manifest = parse_manifest(raw)
    review = install_review(manifest, content_hash(digests))
    print(json.dumps(review.to_json(), indent=2) if args.json else review.text)
    return EXIT_OK


def _cmd_diff(args: argparse.Namespace) -> int:
    from engine.core.manifest import parse_manifest
    from engine.core.review import diff_manifests

    old = parse_manifest(_read_manifest(args.old)[0])
    new = parse_manifest(_read_manifest(args.new)[0])
    diff = diff_manifests(old, new)
    if args.json:
        print(json.dumps(diff.to_json()))
    else:
        print("\n".join(diff.lines) or "no change in declarations")
    # Widening needs a person's consent: a finding, like a failed verification.
    return EXIT_FINDING if diff.widened else EXIT_OK


def _open_log(args: argparse.Namespace) -> tuple[Path, Any]:
    from engine.store.anchor import AnchorFile
    from engine.store.database import open_read_only
    from engine.store.decoding import marked_text
    from engine.store.log import ArrowLog
    from engine.store.migrations import migrations

    path = db_path(args)
    # Read-only: `log show` and `log export` read a copy on a read-only mount too.
    db = open_read_only(path)
    # Text altered by hand into bytes that are not UTF-8 is shown with them replaced
    # (U+FFFD) and flagged under `unreadable` (`ArrowLog._decode`): the rest of the log
    # stays readable, and `log verify` names the row.
    db.conn.text_factory = marked_text
    try:
        # A store a newer engine migrated may hash, key or mean its rows in ways
        # this code does not know: what it showed could be wrong, and a verdict
        # of "ok" (or of tampering) unfounded. Refused as opening it to write is.
        migrations.refuse_unknown(db)
        # So is an anchor a newer engine wrote in its format: what it vouches for
        # cannot be read here (`engine.store.anchor.newer_format`).
        AnchorFile(f"{path}.anchor").refuse_newer()
    except BaseException:
        db.close()
        raise
    return path, ArrowLog(db)


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--store URL`` (a shared PostgreSQL store, instead of ``--db``) to a subcommand."""
    parser.add_argument("--store", metavar="URL", type=given,
                        help="a shared PostgreSQL store (postgresql://…) instead of --db")


def open_store(args: argparse.Namespace) -> Any:
    """The PostgreSQL store ``--store`` names (`engine.store.pg.store.PGStore`).

    Raises:
        CliError: with ``--db`` too, or not a ``postgresql://`` URL (exit code 2).
        StoreFailed: the server cannot be reached.
    """
    from engine.store.pg.store import PGStore, is_postgres_url

    if getattr(args, "db", None):
        raise CliError("give --db or --store, not both")
    if not is_postgres_url(args.store):
        raise CliError("--store takes a postgresql:// URL")
    # The log's verbs read: a database without a store is refused, never made one.
    return PGStore.open(args.store, existing=True)


def _read_log(args: argparse.Namespace, read: Callable[[Any, argparse.Namespace], None]) -> int:
    """Run ``read`` on the log ``args`` name (``--store`` or ``--db``), closed after; a
    store missing a table its migrations made is refused first, naming it."""
    from engine.store.log import refuse_missing
    from engine.store.migrations import migrations

    if getattr(args, "store", None):
        store = open_store(args)
        try:
            refuse_missing(store.missing_tables())
            read(store.log, args)
        finally:
            store.close()
        return EXIT_OK
    _path, log = _open_log(args)
    try:
        refuse_missing(migrations.missing_tables(log.db))
        read(log, args)
    finally:
        log.db.close()
    return EXIT_OK


def _cmd_log_show(args: argparse.Namespace) -> int:
    # Read a page at a time (as `log export`): a log of any size holds one page.
    return _read_log(args, _show)


def _show(log: Any, args: argparse.Namespace) -> None:
    """Print ``log``'s rows under ``args``' filters, up to its newest row now: as JSON
    records, or as one aligned table, whose widths a first pass over the pages finds."""
    from engine.app import export

    last = log.last()

    def pages() -> Iterator[list[dict[str, Any]]]:
        return export.row_pages(log.rows, upto=0 if last is None else last[0],
                                page=export.EXPORT_PAGE, arrow=args.arrow, card=args.card,
                                package=args.package, outcome=args.outcome, call=args.call,
                                since=args.since, until=args.until)

    if args.json:
        for rows in pages():
            if reader_gone():
                return
            for row in rows:
                _print_json(export.decision_record(row))
        return
    widths = [len(c) for c in _COLUMNS]
    shown = 0
    for rows in pages():
        shown += len(rows)
        for row in rows:
            widths = [max(w, len(c)) for w, c in zip(widths, _row_cells(row))]
    print(_table_line(list(_COLUMNS), widths))
    if not shown:
        # Said, not a bare header: a filter that matches nothing (a card id typed wrong)
        # is told from a log that is empty.
        filtered = any(getattr(args, name) is not None for name in _LOG_FILTERS)
        print("(no rows match these filters)" if filtered else "(the log has no rows yet)")
        return
    for rows in pages():
        if reader_gone():
            return
        print("\n".join(_table_line(_row_cells(row), widths) for row in rows))


#: The filters `log show` and `log export` take (their ``args`` names).
_LOG_FILTERS = ("arrow", "card", "package", "outcome", "call", "since", "until")


def _cmd_log_export(args: argparse.Namespace) -> int:
    # Written a page at a time: an export of any size holds one page, not the log.
    return _read_log(args, _print_pages)


def _print_pages(log: Any, args: argparse.Namespace) -> None:
    """Print the decision records of ``log``'s rows under ``args``' filters, page by page."""
    from engine.app.export import record_pages

    last = log.last()
    for records in record_pages(log.rows, upto=0 if last is None else last[0],
                                arrow=args.arrow, card=args.card, package=args.package,
                                outcome=args.outcome, call=args.call, since=args.since,
                                until=args.until):
        if reader_gone():
            return  # the export is its only result, and no one reads it
        for record in records:
            _print_json(record)


def _cmd_log_verify(args: argparse.Namespace) -> int:
    from engine.core.text import inert_lines
    from engine.store.logindex import verify_path

    if args.export is not None:
        return _verify_export(args)
    if args.anchor is not None:
        raise CliError("log verify: --anchor goes with EXPORT (a store is checked against "
                       "the anchor beside it)")
    if getattr(args, "store", None):
        store = open_store(args)
        try:
            result = store.verify_log()
        finally:
            store.close()
    else:
        result = verify_path(db_path(args))
    # A verdict may name the anchor's path, whose folder's name someone else chose:
    # shown inert (ESC, OSC 52, a bidi override as visible symbols).
    problem = inert_lines(str(result.problem or ""))
    if args.json:
        _print_json({"ok": result.ok, "rows": result.rows, "first_bad": result.first_bad,
                     "problem": result.problem or None})
    elif result.ok:
        print(f"log verify: ok: {result.rows} rows")
    elif result.first_bad is None:  # the anchor, or the consent history and grants
        print(f"log verify: FAILED: {problem}")
    else:
        print(f"log verify: FAILED: {result.rows} rows; first bad row {result.first_bad}: "
              f"{problem}")
    return EXIT_OK if result.ok else EXIT_FINDING


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _verify_export(args: argparse.Namespace) -> int:
    """``log verify EXPORT``: the exported file checked alone (`engine.app.exportverify`)."""
    from engine.app.exportverify import verify_export
    from engine.core.text import inert_lines
    from engine.store.anchor import AnchorFile

    if args.db is not None or getattr(args, "store", None):
        raise CliError("log verify: EXPORT is checked alone; leave out --db and --store "
                       "(or leave out EXPORT to check the store)")
    anchor = None
    if args.anchor is not None:
        try:
            anchor = AnchorFile(Path(args.anchor).expanduser()).read()
        except ValueError as exc:
            raise CliError(f"log verify: {exc}") from None
        if anchor is None:
            raise CliError(f"log verify: no anchor file at {args.anchor}")
    name = "standard input" if args.export == "-" else args.export
    try:
        if args.export == "-":
            result = verify_export(sys.stdin.buffer, anchor=anchor)
        else:
            path = Path(args.export).expanduser()
            if path.is_dir():
                raise CliError(f"log verify: {args.export} is a folder, not an exported log")
            with path.open("rb") as stream:
                result = verify_export(stream, anchor=anchor)
    except OSError as exc:
        raise CliError(f"log verify: cannot read {name}: {exc.strerror or exc}") from None
    last = None if result.last is None else {"seq": result.last.seq, "hash": result.last.hash}
    # The file is someone else's: what it made us say is shown inert.
    problem = inert_lines(str(result.problem or ""))
    if args.json:
        _print_json({"ok": result.ok, "rows": result.rows, "first_bad": result.first_bad,
                     "problem": problem or None, "last": last})
    elif result.ok:
        tail = ("" if result.last is None else
                f"; the last is row {result.last.seq}, hash {result.last.hash}")
        check = ("it holds the row the anchor names" if anchor is not None else
                 "compare the last hash with the anchor beside the database (--anchor) to "
                 "see that no rows are missing at its end")
        print(f"log verify: ok: {_rows(result.rows)} in {inert_lines(name)}{tail}; {check}")
    else:
        print(f"log verify: FAILED: {inert_lines(name)}: {_rows(result.rows)} check out; "
              f"{problem}")
    return EXIT_OK if result.ok else EXIT_FINDING


_COLUMNS = ("seq", "time (local)", "arrow", "card", "call", "target", "outcome", "code",
            "reason", "payload")


def _cell(value: object, limit: int = 40) -> str:
    """One table cell, printable and inert (a payload may hold terminal escapes)."""
    text = "-" if value is None or value == "" else str(value)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _time_cell(value: object) -> str:
    """A row's time in local time; a value that is no time (a damaged row: text, NULL,
    1e300) shown as it is, marked, so the rest of the log can still be read."""
    try:
        return format_local(float(cast(Any, value)))
    except (TypeError, ValueError, OverflowError, OSError):
        return f"?{_cell(value, 24)} (not a time)"


def _row_cells(row: dict[str, Any]) -> list[str]:
    """A log row's cells in the columns of ``arrowgate log show`` (`_COLUMNS`)."""
    return [_cell(row.get("seq")), _time_cell(row.get("t")),
            *(_cell(row.get(k)) for k in ("arrow", "card", "call", "target",
                                           "outcome", "code", "reason")),
            _cell(row.get("payload"), 60)]


def _table_line(cells: list[str], widths: list[int]) -> str:
    """One line of ``arrowgate log show``: the number right-aligned, the payload last,
    unpadded."""
    padded = [cells[0].rjust(widths[0])] + [c.ljust(w) for c, w in zip(cells[1:-1],
                                                                         widths[1:-1])]
    return "  ".join([*padded, cells[-1]]).rstrip()


def _open_engine(args: argparse.Namespace, *, create: bool = False) -> Any:
    from engine.engine import Engine

    return Engine.open(db_path(args, create=create, writes=True))


def _view(args: argparse.Namespace) -> StoreView:
    """The store ``--db`` names as it stands (`engine.store.view.StoreView`), for a verb
    that only reads: nothing is migrated, expired or written, so a copy, a read-only
    file or a database another engine is using is read as it is."""
    from engine.store.view import StoreView

    return StoreView(db_path(args))


def _cmd_reach(args: argparse.Namespace) -> int:
    from engine.app.reach import analyse
    from engine.core.errors import CardUnknown

    with _view(args) as view:
        try:
            reach = analyse(view.state, args.card)
        except KeyError:
            # The engine's own error for it, so its code is told as every verb's is.
            raise CardUnknown(f"no custom card {args.card!r} on any canvas",
                              card=args.card) from None
    print(json.dumps(reach.to_json(), indent=2) if args.json else "\n".join(reach.lines()))
    return EXIT_OK


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from engine.engine import Engine
    from engine.store.anchor import AnchorFile
    from engine.store.database import open_read_only
    from engine.store.migrations import migrations

    path = db_path(args, writes=True)
    try:
        look = open_read_only(path)
        try:
            migrations.refuse_unknown(look)  # a newer engine's: never "up to date"
            AnchorFile(f"{path}.anchor").refuse_newer()  # nor its anchor
            behind = migrations.behind(look)
        finally:
            look.close()
        if behind:
            # Opened as every verb that writes opens it: the whole chain in one transaction.
            Engine.open(path).close()
    except sqlite3.DatabaseError as exc:
        raise _not_upgraded(path, exc) from exc
    except StoreFailed as exc:
        # `Engine.open`'s words for SQLite's error ("cannot open the store"), not a
        # refusal of the store's own (a newer or mismatched schema) that says why.
        if exc.reason is not None or not isinstance(exc.__cause__, sqlite3.DatabaseError):
            raise
        raise _not_upgraded(path, exc.__cause__) from exc
    if args.json:
        _print_json({"db": str(path), "applied": behind})
    elif behind:
        print(_inert_text(f"{path}: upgraded ({len(behind)} migrations: {', '.join(behind)})"))
    else:
        print(_inert_text(f"{path}: up to date"))
    return EXIT_OK


def _not_upgraded(path: Path, exc: sqlite3.DatabaseError) -> StoreFailed:
    """An upgrade SQLite refused (a full or failing disk): the database named, and that
    it is as it was, since the migrations are one transaction (`migrations.Chain.apply`)."""
    return StoreFailed(f"{path} was not upgraded: {exc}; the upgrade is one transaction, so "
                       "the database is as it was (its older code still opens it, and "
                       "arrowgate upgrade may be run again)")


def _cmd_import(args: argparse.Namespace) -> int:
    import asyncio

    from engine.app.snapshot import snapshot_engine
    from engine.core.text import inert_lines
    from engine.effects.operator import operator_check

    if not args.dry_run:
        check = operator_check()
        if not check.ok:
            # Importing draws arrows, which is consent: only a person at a terminal.
            # A dry run draws nothing and gives no consent: a script may run it.
            raise CliError(f"import refused: {check.reason}", exit_code=EXIT_FINDING)
    doc = _read_canvas_file(args.file)
    workspace = args.workspace or Path(args.file).stem
    folder = Path(args.folder or Path(args.file).parent).resolve()
    # What a person is shown before consenting goes to stderr under --json,
    # so that standard output holds the JSON answer alone.
    shown = sys.stderr if args.json else sys.stdout

    # The review first, every arrow in it; nothing is drawn until the person says
    # yes to it (or names it, --review-sha256), and the import is bound to it.
    digest = args.review_sha256
    if digest is None:
        # Made on an in-memory copy of the database: a dry run, or a "no", leaves
        # the disk as it found it (no database, folder or -wal file made).
        look = snapshot_engine(db_path(args, create=True, make_folder=False))
        try:
            preview = asyncio.run(_said_how(look.preview_import(workspace, folder, doc)))
        finally:
            look.close()
        if args.dry_run:
            if args.json:
                _print_json({"workspace": workspace, "folder": str(folder),
                             "review": preview.lines, "review_sha256": preview.sha256,
                             "imported": False})
            else:
                print("\n".join(preview.lines))
                print(f"review sha256: {preview.sha256} (nothing was imported)")
            return EXIT_OK
        print(inert_lines(f"import {args.file} as workspace {workspace!r}?"), file=shown)
        print("\n".join(preview.lines), file=shown)
        print("import it, drawing these arrows? [y/N] ", end="", file=shown, flush=True)
        answer = sys.stdin.readline()
        if not sys.stdin.isatty():  # answered from a pipe: no echoed Enter ends the line
            print(file=shown, flush=True)
        if answer.strip().lower() not in ("y", "yes"):
            raise CliError("not confirmed: nothing was imported", exit_code=EXIT_FINDING)
        digest = preview.sha256
    # Bound to the review shown: were the database changed since, it is `stale`.
    engine = _open_engine(args, create=True)
    try:
        review = asyncio.run(_said_how(engine.import_canvas(workspace, folder, doc,
                                                            review_sha256=digest)))
        nodes = len(engine.state.canvas.nodes(workspace))
        arrows = len(engine.state.canvas.arrows(workspace))
        if args.json:
            _print_json({"workspace": workspace, "folder": str(folder), "nodes": nodes,
                         "arrows": arrows, "review": review.lines,
                         "review_sha256": review.sha256, "imported": True})
        else:
            print(inert_lines(f"imported {args.file} as workspace {workspace!r} ({folder}): "
                              f"{nodes} nodes, {arrows} arrows"))
        return EXIT_OK
    finally:
        engine.close()


async def _said_how(importing: Awaitable[T]) -> T:
    """``importing``'s answer; a workspace id the database has already is refused saying
    how to import the file anyway, under another id (``--workspace``)."""
    from engine.core.errors import InvalidArgument

    try:
        return await importing
    except InvalidArgument as exc:
        if exc.reason != "workspace":
            raise
        exc.args = (f"{exc.message} (import it as another workspace: --workspace ID)",)
        raise


def _cmd_export(args: argparse.Namespace) -> int:
    from engine.core.errors import NotFound
    from engine.services.interchange import canvas_document

    with _view(args) as view:
        workspaces = view.state.workspaces
        workspace = args.workspace
        if workspace is None:
            if len(workspaces) != 1:
                names = ", ".join(sorted(workspaces)) or "none"
                raise CliError(f"name a workspace with --workspace (there are: {names})")
            workspace = next(iter(workspaces))
        if workspace not in workspaces:
            raise NotFound(f"no workspace {workspace!r}", reason="missing-workspace")
        text = json.dumps(canvas_document(view.state.canvas, workspace, view.meta),
                          indent="\t")
    if args.output:
        Path(args.output).write_text(text + "\n")
    else:
        print(text)
    return EXIT_OK


def interactive() -> bool:
    """True when a person can work a full-screen UI here (stdin and stdout are terminals)."""
    return bool(sys.stdin and sys.stdin.isatty() and sys.stdout and sys.stdout.isatty())


def _cmd_demo(args: argparse.Namespace) -> int:
    import asyncio

    from engine.app.demo import load_demo, play_demo
    from engine.app.enterkey import press_enter

    files = load_demo()  # a missing or broken demos/ folder is told before any database is made
    engine = _open_engine(args, create=True)
    folder = Path(args.folder) if args.folder else default_db_path().parent / "demo-project"
    # The hints name the same database, so they work as printed.
    db_flag = f" --db {shlex.quote(args.db)}" if args.db else ""
    tui = f"arrowgate tui --demo{db_flag}"

    async def run() -> int:
        try:
            # The narrative names the folder and the database as given: shown inert.
            await play_demo(engine, folder, lambda text: print(_inert_text(text)),
                            tui_command=tui, files=files)
            launch = None if args.no_tui else _plugin("apps", "tui")

            def next_steps() -> int:
                print("")
                print(_inert_text(f"Next: `{tui}` to inspect the arrow logs and answer the "
                                  f"held prompt; `arrowgate log show{db_flag}` for the log."))
                return EXIT_OK

            if launch is None or not interactive():
                if not args.no_tui:
                    why = ("the TUI is not installed" if launch is None
                           else "standard input or output is not a terminal")
                    print(f"arrowgate: {why}; printed the narrative only", file=sys.stderr)
                return next_steps()
            # Let the narrative be read before the TUI takes the screen (waited for on
            # the loop, so the drivers run on and Ctrl-C ends the wait at once).
            if not await press_enter("\nPress Enter to open the TUI "
                                     "(holds screen: a approves, r rejects) "):
                print("")  # Ctrl-D: no one will work the TUI; the narrative stands
                return next_steps()
            return int(await launch(engine))
        finally:
            await engine.world.aclose()

    try:
        return asyncio.run(run())
    finally:
        engine.close()


def _inert_text(text: str) -> str:
    """``text`` with its lines kept and every control character in them shown inert
    (`visible`): a path the person gave, echoed back, is never obeyed by the terminal."""
    from engine.core.text import visible

    return "\n".join(visible(line) for line in text.split("\n"))


def _plugin(group: str, name: str) -> Any:
    """An entry point of group ``arrowgate.<group>``: how the TUI plugs in headlessly."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=f"arrowgate.{group}"):
        if ep.name == name:
            return ep.load()
    return None


def _cmd_docs(args: argparse.Namespace) -> int:
    if args.topic == "schemas":
        from engine.app.schemas import write_schemas

        for path in write_schemas(Path(args.out)):
            print(_inert_text(str(path)))
        return EXIT_OK
    from engine.app.docs import call_reference, permission_reference

    print(call_reference() if args.topic == "calls" else permission_reference(), end="")
    return EXIT_OK


# -- the parser --------------------------------------------------------------------------


def _log_parsers(sub: Any) -> None:
    log = sub.add_parser("log", help="show, export or verify the arrow log",
                         description="The arrow log: show it, export it as JSON Lines, "
                                     "or verify its hash chain and anchor.")
    verbs = log.add_subparsers(dest="action", required=True, metavar="{show,export,verify}",
                               help="what to do with the log")

    def filters(p: argparse.ArgumentParser) -> None:
        add_db_option(p)
        add_store_option(p)
        p.add_argument("--arrow", metavar="ID", type=text_argument,
                       help="only rows logged on this arrow")
        p.add_argument("--card", metavar="ID", type=text_argument,
                       help="only calls of this card")
        p.add_argument("--package", metavar="NAME", type=text_argument,
                       help="only calls of this package's cards")
        p.add_argument("--call", metavar="NAME", type=text_argument,
                       help="only this call (e.g. agents.prompt)")
        p.add_argument("--outcome", choices=LOG_OUTCOMES, metavar="OUTCOME",
                       help=f"only rows with this outcome: {', '.join(LOG_OUTCOMES)}")
        p.add_argument("--since", type=_since_until, metavar="TIME",
                       help=f"only rows at or after TIME: {TIME_HELP}; without an offset an "
                            "ISO time is local time")
        p.add_argument("--until", type=_since_until, metavar="TIME",
                       help="only rows at or before TIME (as --since)")

    p = verbs.add_parser("show", help="the log as aligned columns, times in local time",
                         description="Print log rows, oldest first, as aligned columns.")
    filters(p)
    p.add_argument("--json", action="store_true",
                   help="one JSON decision record per line, as `log export` writes")
    p.set_defaults(fn=_cmd_log_show)
    p = verbs.add_parser("export", help="one JSON decision record per line (JSON Lines)",
                         description="Export log rows as JSON Lines in the stable schema "
                                     "arrowgate.decision/1 (see the README).")
    filters(p)
    # Both mean the one format; --json as on every verb that prints data (its errors
    # then in JSON on stderr too).
    p.add_argument("--json", action="store_true",
                   help="JSON Lines (the only format, and the default); errors in JSON too")
    p.add_argument("--jsonl", action="store_true",
                   help="JSON Lines (the only format, and the default)")
    p.set_defaults(fn=_cmd_log_export)
    p = verbs.add_parser("verify", help="check the hash chain and the anchor",
                         description="Check every row's hash and link and the newest row "
                                     "against the anchor file; exit 1 naming the first bad "
                                     "row. Given EXPORT (a file `log export` wrote, or - "
                                     "for standard input), check that file instead, by the "
                                     "README's recipe: the store is not opened.")
    p.add_argument("export", nargs="?", metavar="EXPORT", type=given,
                   help="an exported log (JSON Lines, a whole export: line n is row n); "
                        "- reads standard input")
    add_db_option(p)
    add_store_option(p)
    p.add_argument("--anchor", metavar="FILE", type=given,
                   help="with EXPORT: an anchor file (the database's .anchor, or a copy kept "
                        "when the export was made); the export must hold the row it names")
    p.add_argument("--json", action="store_true",
                   help='print {"ok", "rows", "first_bad", "problem"} as JSON (with EXPORT, '
                        'also "last": the last row\'s {"seq", "hash"})')
    p.set_defaults(fn=_cmd_log_verify)


def build_parser(*, as_json: bool = False) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, plugged-in ones included; a plug-in that
    cannot be added is a warning on stderr (`_register_plugins`), one JSON object with
    ``as_json``."""
    parser = Parser(
        prog="arrowgate", description="A graph-aware arrow consent engine.",
        epilog="Exit codes: 0 ok; 1 a finding (a log that fails verification, a diff that "
               "widens, a replay with failures, a refusal); 2 a usage error or invalid "
               "input; 130 interrupted (Ctrl-C).")
    parser.add_argument("--version", action="version", version=f"arrowgate {arrowgate_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="the verb; `arrowgate COMMAND --help` explains each")

    p = sub.add_parser("replay", help="play conformance cases (FORMAT.md)")
    p.add_argument("cases", nargs="+", metavar="CASE.json", help="case files to play")
    p.add_argument("--json", action="store_true", help="one JSON object per step")
    p.add_argument("--store", metavar="URL", type=given,
                   help="play every case on a PostgreSQL database (postgresql://…), each in a"
                        " schema of its own, dropped after")
    p.set_defaults(fn=_cmd_replay)

    p = sub.add_parser("review", help="the install review of a manifest or package folder")
    p.add_argument("manifest", metavar="MANIFEST",
                   help="a manifest.json file or a package folder")
    p.add_argument("--json", action="store_true", help="the review as JSON")
    p.set_defaults(fn=_cmd_review)

    p = sub.add_parser("diff", help="widening and narrowing between two manifests "
                                    "(exit 1 when it widens)")
    p.add_argument("old", metavar="OLD", help="the manifest (or package folder) granted now")
    p.add_argument("new", metavar="NEW", help="the new version's manifest (or package folder)")
    p.add_argument("--json", action="store_true", help='{"widened": [...], "narrowed": [...]}')
    p.set_defaults(fn=_cmd_diff)

    _log_parsers(sub)

    p = sub.add_parser("docs", help="generated documentation and JSON Schemas")
    p.add_argument("topic", choices=["permissions", "calls", "schemas"],
                   help="permissions / calls: the README's permission reference / call table; "
                        "schemas: write the JSON Schemas of manifests, nodes, arrows and "
                        "decisions")
    p.add_argument("--out", default="schemas", metavar="DIR",
                   help="schemas: the folder to write them to (default: schemas)")
    p.set_defaults(fn=_cmd_docs)

    p = sub.add_parser("demo", help="build the demo canvas and play a narrated run")
    add_db_option(p, creates=True)
    p.add_argument("--folder", metavar="DIR", type=given,
                   help="the demo project folder (default: demo-project beside the default "
                        "database)")
    p.add_argument("--no-tui", action="store_true",
                   help="print the narrative and exit (also when not run in a terminal)")
    p.set_defaults(fn=_cmd_demo)

    p = sub.add_parser("reach", help="what a card can cause, directly and transitively")
    p.add_argument("card", metavar="CARD", type=text_argument, help="the card node's id")
    add_db_option(p)
    p.add_argument("--json", action="store_true", help="the analysis as JSON")
    p.set_defaults(fn=_cmd_reach)

    p = sub.add_parser("upgrade", help="bring a database an older arrowgate made up to date",
                       description="Apply the migrations an older arrowgate's database lacks "
                                   "(what a verb that opens the engine does first; the verbs "
                                   "that only read refuse such a database instead). It opens "
                                   "the engine, as every verb that writes: holds past their "
                                   "time expire then too.")
    add_db_option(p)
    p.add_argument("--json", action="store_true",
                   help='print {"db", "applied": [the migrations applied]} as JSON')
    p.set_defaults(fn=_cmd_upgrade)
    from engine.app.copystore import register as register_copy

    register_copy(sub)  # `arrowgate copy`: a whole store into an empty PostgreSQL database

    p = sub.add_parser("import", help="import a JSON Canvas 1.0 file as a new workspace")
    p.add_argument("file", metavar="FILE.canvas", help="the JSON Canvas file")
    add_db_option(p, creates=True)
    p.add_argument("--workspace", metavar="ID", type=text_argument,
                   help="workspace id (default: the file's name)")
    p.add_argument("--folder", metavar="DIR", type=given,
                   help="project folder (default: the file's folder)")
    p.add_argument("--json", action="store_true",
                   help='print {"workspace", "folder", "nodes", "arrows"} as JSON (the '
                        'review and the question go to stderr)')
    # Either, never both: a dry run must never import because a digest came with it.
    once = p.add_mutually_exclusive_group()
    once.add_argument("--dry-run", action="store_true",
                      help="print the review and its sha256; import nothing")
    once.add_argument("--review-sha256", metavar="SHA256",
                      help="the sha256 of the review you saw (--dry-run); then nothing is "
                           "asked, and another review is refused as stale")
    p.set_defaults(fn=_cmd_import)

    p = sub.add_parser("export", help="export a workspace as JSON Canvas 1.0")
    add_db_option(p)
    p.add_argument("--workspace", metavar="ID", type=text_argument,
                   help="the workspace (default: the only one there is)")
    p.add_argument("-o", "--output", metavar="FILE", type=given, help="file to write (default: stdout)")
    p.add_argument("--json", action="store_true",
                   help="JSON Canvas is JSON already (the default); errors in JSON too")
    p.set_defaults(fn=_cmd_export)
    from engine.service import register as register_serve

    register_serve(sub)  # `arrowgate serve`: the HTTP service (SPEC §10.1)
    from engine.app.mcp import register as register_mcp

    register_mcp(sub)  # `arrowgate mcp`: card tools for an agent over MCP (SPEC §10.2)
    from engine.app.cli_write import register as write_verbs  # node, arrow, package, call, hold

    write_verbs(sub)

    _register_plugins(sub, as_json=as_json)
    return parser


def _say_usage(error: UsageError, *, as_json: bool) -> None:
    """A usage error on stderr: argparse's usage and its one ``error:`` line (inert), or
    under ``--json`` one JSON object ``{"error": {"code": "USAGE", "message", "usage"}}``."""
    from engine.core.text import inert_lines

    if as_json:
        usage = " ".join(error.usage.split()).removeprefix("usage: ")
        _say(f"{error.prog}: {error.message}", {"code": "USAGE", "usage": usage}, as_json=True)
        return
    sys.stderr.write(error.usage)
    print(f"{error.prog}: error: {inert_lines(error.message)}", file=sys.stderr)


def _register_plugins(sub: Any, *, as_json: bool) -> None:
    """Let every ``arrowgate.cli`` entry point add its subcommands (sorted by name).

    A plug-in that fails to load or to register is a warning on stderr (`_warn`), and
    the other verbs work: a broken plug-in must not take them with it. What a plug-in
    prints meanwhile is told on stderr too: standard output holds the verb's data alone.
    """
    import io
    from contextlib import redirect_stdout
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group="arrowgate.cli"), key=lambda e: e.name):
        printed = io.StringIO()
        problem = ""
        try:
            with redirect_stdout(printed):
                register: Callable[[Any], None] = ep.load()
                register(sub)
        except Exception as exc:
            problem = f"the {ep.name!r} commands are unavailable: {exc}"
        if problem or printed.getvalue():
            _warn(problem or f"the {ep.name!r} plug-in printed as it loaded", ep.name,
                  printed.getvalue(), as_json=as_json)


def _warn(message: str, plugin: str, output: str, *, as_json: bool) -> None:
    """A plug-in's warning on stderr, inert and bounded: ``arrowgate: …`` and what it
    printed, or under ``--json`` one object ``{"warning": {"message", "plugin"[,
    "output"]}}``, as errors are answered there."""
    from engine.core.text import clipped, inert_lines

    if as_json:
        warning = {"message": clipped(message), "plugin": plugin}
        if output:
            warning["output"] = clipped(output)
        print(json.dumps({"warning": warning}, sort_keys=True), file=sys.stderr)
        return
    print(f"arrowgate: {inert_lines(message)}", file=sys.stderr)
    if output:
        print(inert_lines(clipped(output.rstrip("\n"))), file=sys.stderr)


def _exit_code(exc: ConsentError) -> int:
    """Invalid input is a usage error (2); a refusal is a finding (1).

    A store whose schema this code does not know, a database that holds no
    store, or a server that cannot be reached is input it cannot use (2), not a
    finding about the store: `log verify` would otherwise say 1, "tampered".
    """
    if isinstance(exc, (ManifestInvalid, InvalidRequest, CaseInvalid)):
        return EXIT_USAGE
    if isinstance(exc, StoreFailed) and exc.reason in UNUSABLE_STORE:
        return EXIT_USAGE
    return EXIT_FINDING


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 a finding, 2 usage, 130
    interrupted)."""
    fill_closed_streams()
    escape_unencodable()
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(as_json=asks_json(words))
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        _say_usage(exc, as_json=asks_json(words))
        return EXIT_USAGE
    except SystemExit as exc:  # --help or --version, printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    stdout = sys.stdout
    if stdout is None or stdout.isatty():
        # No output, or a terminal: it never goes away under a verb (and the TUI wants it as is).
        return _run(args)
    output = ReaderGoneOutput(stdout)
    sys.stdout = cast(TextIO, output)
    try:
        return _run(args)
    finally:
        output.flush()  # a buffered finding's line: its failure must not decide the exit code
        sys.stdout = stdout


#: The exit code of a verb stopped by Ctrl-C (128 + SIGINT, as a shell says).
EXIT_INTERRUPTED = 130


def _run(args: argparse.Namespace) -> int:
    """The verb ``args`` names; its exit code, or the one its error maps to."""
    # A verb asked for --json answers its errors in JSON too (the write verbs
    # print their own, `engine.app.cli_write`, and never raise here).
    as_json = getattr(args, "json", False) is True
    try:
        return int(args.fn(args))
    except CliError as exc:
        _say(exc.message, as_json=as_json)
        return exc.exit_code
    except ConsentError as exc:
        _say(with_reason(exc.message, exc.reason), exc.to_json(), as_json=as_json)
        return _exit_code(exc)
    except sqlite3.DatabaseError as exc:
        _say(f"the database cannot be used: {exc}", as_json=as_json)
        return EXIT_USAGE
    except OSError as exc:
        _say(str(exc), as_json=as_json)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Ctrl-C (at a [y/N] question, most often): "stop", not a crash. On a line
        # of its own, as the cursor may stand after the question.
        print(file=sys.stderr)
        _say("interrupted", as_json=as_json)
        return EXIT_INTERRUPTED


def _say(message: str, data: dict[str, Any] | None = None, *, as_json: bool = False) -> None:
    """An error on stderr as ``arrowgate: …``, its lines inert and bounded: it may
    echo a file's name or an id that a sender chose (ESC sequences, megabytes).

    With ``as_json``: one line ``{"error": {"message", ...}}`` instead (``data``: the
    error's JSON form, its ``code`` and ``reason``), as the write verbs answer.
    """
    from engine.core.text import clipped, inert_lines

    if as_json:
        error = dict(data) if data else {}
        error["message"] = clipped(str(error.get("message") or message))
        print(json.dumps({"error": error}, sort_keys=True, default=str), file=sys.stderr)
        return
    print(f"arrowgate: {inert_lines(message)}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
