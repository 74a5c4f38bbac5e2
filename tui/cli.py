"""``arrowgate tui``: plugged into the command line by an entry point.

`engine.app.cli` never imports this package; it finds `register` and `launch`
through the ``arrowgate.cli`` and ``arrowgate.apps`` entry points, so the
engine stays headless.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine import Engine

    from .screens.review import ManifestFile

__all__ = ["exit_status", "keymap_path", "launch", "register"]


def keymap_path() -> Path:
    """``$ARROWGATE_KEYMAP`` or ``~/.config/arrowgate/keymap.json`` (binding id → keys)."""
    env = os.environ.get("ARROWGATE_KEYMAP")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "arrowgate" / "keymap.json"


#: The largest keymap file read (a few hundred bindings take a few KiB).
KEYMAP_MAX_BYTES = 1024 * 1024


def _keymap() -> dict[str, str]:
    """The person's keymap, or {} without one.

    Raises:
        SystemExit: the file cannot be read, is not one object of binding id → keys (each
            id once), or would make consent easier to give by accident (`tui.keymap`);
            the message names the file and the line.
    """
    path = keymap_path()
    if not path.exists():
        return {}
    from engine.effects.userfile import read_user_text

    from .app import keymap_refusals
    from .keymap import describe, read_keymap

    try:
        # Through the reader of files a person names: a FIFO or a device at that path
        # would otherwise hang the TUI before it draws anything.
        read = read_keymap(read_user_text(path, limit=KEYMAP_MAX_BYTES))
    except (OSError, ValueError, RecursionError) as exc:
        raise SystemExit(f"arrowgate: cannot read the keymap {path}: {exc}") from exc
    problems = keymap_refusals(read.keymap)
    if problems:
        raise SystemExit(f"arrowgate: the keymap {path} would make consent easier to give "
                         "by accident:\n" + "".join(f"  {describe(p, read.lines)}\n"
                                                    for p in problems)
                         + "A key that gives consent is never one that moves, scrolls or "
                           "closes, nor another binding's key, and high-risk consent keeps a "
                           "deliberate key (an upper-case letter or a modifier).")
    return read.keymap


def register(sub: Any) -> None:
    """Add the ``tui`` subcommand."""
    from engine.app.cli import add_db_option, add_store_option

    p = sub.add_parser("tui", help="the terminal UI: canvas, arrow logs, holds, grants")
    add_db_option(p)
    add_store_option(p)
    p.add_argument("--demo", action="store_true",
                   help="open on the demo canvas (run `arrowgate demo` first)")
    p.add_argument("--review", metavar="MANIFEST",
                   help="show the install review of a manifest or package folder")
    p.add_argument("--screen", choices=["canvas", "log", "holds", "grants", "prompts"],
                   default=None,
                   help="the screen to open on (default: canvas, or holds for --demo with "
                        "held prompts)")
    p.set_defaults(fn=_cmd_tui)


def _cmd_tui(args: argparse.Namespace) -> int:
    from engine.app.cli import CliError, db_path, interactive, open_store, read_manifest_source

    if not interactive():
        # Without a terminal a full-screen app can only spin or hang: refuse at once.
        raise CliError("tui needs a terminal: standard input or output is not one (run it "
                       "in a terminal; without one, `arrowgate log show`, `hold list` and "
                       "`reach` read the same database)")
    from .app import ArrowgateApp
    from .screens.review import ManifestFile
    from .tty import terminal_driver

    keymap = _keymap()
    db = None if getattr(args, "store", None) else db_path(args)
    named: ManifestFile | None = None
    if args.review:
        # Read before the engine opens the database: SQLite's locks are the process's,
        # and closing any descriptor of the database (a package folder holding it) would
        # drop the engine's, and the next program to close the database would delete
        # the write-ahead log under the app.
        if db is not None:
            _refuse_database_file(args.review, db)
        raw, text, digests = read_manifest_source(args.review)
        named = ManifestFile(args.review, raw, digests, text)
    # Imported here: every `arrowgate` verb loads this module to register `tui`, and the
    # engine's import is most of what a verb like `log verify` costs (0.25 s of 0.5).
    from engine import Engine

    if db is None:
        # The shared store: the engine on PostgreSQL, the log view reading its
        # log table, other engines' changes through its change feed.
        engine = Engine.open(store=open_store(args))
    else:
        engine = Engine.open(db)

    async def run() -> int:
        review = await _to_review(engine, named) if named is not None else None
        start = args.screen or ("holds" if args.demo and engine.prompts(state="held")
                                else "canvas")
        if args.demo and "demo" not in engine.state.workspaces:
            raise SystemExit("arrowgate: no demo canvas yet; run `arrowgate demo` first")
        app = ArrowgateApp(engine, keymap=keymap, start=start, review=review,
                           driver_class=terminal_driver())
        return exit_status(app, await app.run_async())

    try:
        return asyncio.run(run())
    finally:
        engine.close()


def _refuse_database_file(review: str, db: Path) -> None:
    """Refuse ``--review`` of the database the app opens or of a file of its own.

    Raises:
        CliError: naming the file and which of the database's files it is.
    """
    from engine.app.cli import CliError
    from engine.app.common import own_file_of
    from engine.core.text import visible

    what = own_file_of(db, Path(review))
    if what is not None:
        raise CliError(f"--review {visible(review)}: is a file of the database "
                       f"{visible(str(db))} ({what}), not a manifest or a package folder")


async def _to_review(engine: Engine, file: ManifestFile) -> str | ManifestFile:
    """What ``--review MANIFEST`` shows: the file offered and its install review, or,
    for a package installed already, the file's own review to read.

    An installed package is not offered again (the engine refuses: "send an
    update"), and the file is not sent as that update: an update narrows the
    grants at once and holds the package's cards until it is approved, a change
    no one asked for by asking to *look* at a file. The review shown is always
    the file's; before, it was the installed version's, under the file's name.
    """
    pkg = engine.state.packages.get(file.name)
    if pkg is not None and pkg.installed:
        return file
    await engine.offer(file.name, file.text if file.text is not None else file.raw,
                       file.digests)
    return file.name


async def launch(engine: Engine) -> int:
    """Open the TUI on an engine already running (the demo, with its live drivers)."""
    from .app import ArrowgateApp
    from .tty import terminal_driver

    start = "holds" if engine.prompts(state="held") else "canvas"
    app = ArrowgateApp(engine, keymap=_keymap(), start=start, driver_class=terminal_driver())
    return exit_status(app, await app.run_async())


def exit_status(app: Any, result: int | None) -> int:
    """The process's exit status: non-zero when the app crashed, whatever it returned."""
    code = app.return_code
    if code:
        return int(code)
    return int(result or 0)
