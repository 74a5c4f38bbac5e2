"""The command line's write verbs: nodes, arrows, packages, calls and holds.

``arrowgate workspace add``, ``arrowgate node add|set|remove``, ``arrowgate arrow add|remove``,
``arrowgate package offer|review|install|grant|revoke|approve|decline``, ``arrowgate call``,
``arrowgate hold list|approve|reject`` and ``arrowgate token mint|revoke|list`` are thin clients: of the engine,
directly on the database (``--db``, like the other verbs), or of a running
``arrowgate serve`` (``--service ADDRESS``, a socket path or
``http://127.0.0.1:PORT``, with the operator's or a card's token from
``--token-file``). Both paths answer the same JSON (``--json``). The verbs that
only read (``package review``, ``hold list``) read ``--db`` as it stands, changing
nothing (`ViewBackend`).

Exit codes: 0 done; 1 a refusal or a finding (a refused call, a consent
action refused, a person who said no, a failure of the store or the
service); 2 usage or invalid input (bad arguments, no such node, a manifest
that is not valid, an address that is no service, a database a newer engine
migrated or this user cannot write). Errors go to standard error.

Verbs that give or widen consent, or change the canvas — ``workspace add``, ``node add``,
``node set``, ``node remove``, ``arrow add``, ``package install``, ``package grant``,
``package approve``, ``package decline``, ``hold approve`` and ``token mint`` (a card's or
an agent's token: an agent must not mint itself one) — first decide that a person operates this
process (`engine.effects.operator.operator_check`, as the TUI does) and refuse otherwise,
whether they then work on the database or through the service (which makes
its own check on the socket's peer as well). Verbs that only narrow consent
(arrow remove, revoke, reject) and those that give none (offer, call, list) do not.
(Removing a node destroys what a person put on the canvas, not only its arrows: the
engine takes it from the operator only, as it takes adding one. Declining an update puts
the approved version back, so that its cards work again: the engine takes that from the
operator only too.)
A verb that shows something before consenting (the install review, the
update's diff, the held prompt's full text) asks the person to confirm,
unless the hash of what they saw earlier is passed (``--review-hash``,
``--sha256``): then nothing is asked, and a different hash is ``stale``.

The verbs live by group, one module each: `engine.app.writecanvas` (workspace,
node, arrow), `engine.app.writepackages`, `engine.app.writecalls`,
`engine.app.writeholds` and `engine.app.writetokens`; what they work on, in `engine.app.writebackends` and
`engine.app.serviceclient`. This module runs them: the operator check, the
question asked, the answer printed and the error answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from engine.app import writecalls, writecanvas, writeholds, writepackages, writetokens
from engine.app.asking import Answer, Asking
from engine.app.common import given, with_reason
from engine.app.madefiles import MadeFiles
from engine.app.serviceclient import ServiceBackend, service_token, service_transport
from engine.app.writebackends import Backend, LocalBackend, Reader, ViewBackend
from engine.app.writefailure import OK, REFUSED, USAGE, Failure, error_json
from engine.app.writetext import inert, shown, text_sha256
from engine.core.errors import ConsentError
from engine.core.text import inert_lines
from engine.effects.operator import operator_check
from engine.effects.userfile import FileRefused

__all__ = ["OK", "REFUSED", "USAGE", "Backend", "Failure", "LocalBackend", "Reader",
           "ServiceBackend", "ViewBackend", "inert", "register", "service_transport",
           "text_sha256"]


def _backend(args: argparse.Namespace, made: MadeFiles) -> Backend:
    """The backend of a verb that may write: the service's, or the engine on ``--db``;
    a database the verb creates (``workspace add``'s first) is noted in ``made``."""
    if args.service:
        return ServiceBackend(args.service, service_token(args))
    path = _local_path(args, writes=True, make_folder=False)
    made.new_database(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return LocalBackend(path)


def _reader(args: argparse.Namespace) -> Reader:
    """The backend of a verb that only reads: the service's, or a view of ``--db``."""
    import sqlite3

    if args.service:
        return ServiceBackend(args.service, service_token(args))
    path = _local_path(args, writes=False)
    try:
        return ViewBackend(path)
    except sqlite3.DatabaseError as exc:  # a read-only folder with changes waiting, ...
        raise Failure(USAGE, f"the database cannot be used: {exc}") from exc


def _local_path(args: argparse.Namespace, *, writes: bool, make_folder: bool = True) -> Path:
    """The database ``--db`` names, checked as every other verb's is: never tables
    written into another program's SQLite file or a text file a typo named."""
    from engine.app.common import CliError, db_path

    try:  # the first verb on a new database creates it
        return db_path(args, create=args.command == "workspace", writes=writes,
                       make_folder=make_folder)
    except CliError as exc:
        message = exc.message if args.db or args.command == "workspace" else \
            f"{exc.message} (or give --db, or --service)"
        raise Failure(USAGE, message) from exc


# --------------------------------------------------------------- the verbs
def _require_operator(verb: str) -> None:
    check = operator_check()
    if not check.ok:
        raise Failure(REFUSED, f"{verb} refused: {check.reason}", error_json(
            "APPROVAL_REFUSED", f"{verb} refused: {check.reason}", reason="not-operator"))


def _confirm(out: Any, question: str) -> None:
    print(f"{shown(question)} [y/N] ", end="", file=out, flush=True)
    answer = sys.stdin.readline()
    if not _echoes(sys.stdin):
        # Answered from a pipe: no Enter was echoed, and what follows would run on
        # after the question ("… [y/N] installed acme.prompter").
        print(file=out, flush=True)
    answer = answer.strip().lower()
    if answer not in ("y", "yes"):
        raise Failure(REFUSED, "not confirmed: nothing was changed", error_json(
            "NOT_CONFIRMED", "not confirmed: nothing was changed"))



def _echoes(stream: Any) -> bool:
    """Whether ``stream`` is a terminal, which echoed the answer and its Enter."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


#: Verbs that give or widen consent, or change the canvas: a person must operate
#: this process.
_CONSENT = frozenset({"workspace add", "node add", "node set", "node remove", "arrow add",
                      "package install", "package grant", "package approve", "package decline",
                      "hold approve", "token mint"})


#: Verbs that only read: on ``--db`` they read a view of the store (`ViewBackend`), which
#: changes nothing — no migration, no expired hold, no file beside the database.
_READS = frozenset({"package review", "hold list"})


async def _carry_out(args: argparse.Namespace, verb: str) -> Answer:
    """The verb on its backend, closed after: (exit code, JSON answer, text answer)."""
    if args.command == "token":  # the store's token table or the service's token routes
        return await writetokens.run(verb, args)
    if verb in _READS:
        reader = _reader(args)
        try:
            if args.command == "package":
                return await writepackages.read(args, reader)
            return await writeholds.read(reader)
        finally:
            await reader.aclose()
    # A refused verb changes nothing: the database it made (the first workspace add on
    # a new one) is removed with its folders, once the engine has closed it.
    made = MadeFiles()
    try:
        backend = _backend(args, made)
        try:
            return await _run(verb, args, backend)
        finally:
            await backend.aclose()
    except BaseException:
        made.undo()
        raise


async def _run(verb: str, args: argparse.Namespace, backend: Backend) -> Answer:
    """Carry out a verb that may change something, in its group's module."""
    # What a person is shown before consenting goes to stderr under --json,
    # so that standard output holds the JSON answer alone.
    out = sys.stderr if args.json else sys.stdout
    # `_confirm` looked up at each question: what a person is asked is this module's.
    ask = Asking(out, lambda question: _confirm(out, question))
    if args.command == "call":
        return await writecalls.run(args, backend)
    if args.command == "package":
        return await writepackages.run(verb, args, backend, ask)
    if args.command == "hold":
        return await writeholds.run(verb, args, backend, ask)
    return await writecanvas.run(verb, args, backend, ask)


def _cmd(args: argparse.Namespace) -> int:
    verb = f"{args.command} {args.action}" if getattr(args, "action", None) else args.command
    try:
        if verb in _CONSENT:
            _require_operator(verb)
        code, data, text = asyncio.run(_carry_out(args, verb))
    except ConsentError as exc:
        return _fail(args, Failure.of(exc))
    except Failure as exc:
        return _fail(args, exc)
    except FileRefused as exc:  # a FIFO, device, huge file or outside link: named
        return _fail(args, Failure(USAGE, str(exc)))
    except OSError as exc:  # a package folder or file that cannot be read
        return _fail(args, Failure(USAGE, f"cannot read {exc.filename or ''}: "
                                          f"{exc.strerror or exc}".replace("read : ", "read: ")))
    # The text echoes names a person or a script passed (a card id, a folder) and what
    # the service answered: shown inert, as errors are.
    print(json.dumps(data, sort_keys=True) if args.json else shown(text))
    return code


def _fail(args: argparse.Namespace, failure: Failure) -> int:
    if args.json:
        print(json.dumps({"error": failure.data}, sort_keys=True), file=sys.stderr)
    else:
        # Its lines may echo a file's name or an id a sender chose: inert and bounded.
        text = with_reason(str(failure), failure.data.get("reason"))
        print(f"arrowgate: {inert_lines(text)}", file=sys.stderr)
    return failure.exit_code


# ----------------------------------------------------------- the parsers
#: What every write verb's --help says of its exit codes (this module's docstring).
_EXIT_CODES = ("Exit codes: 0 done; 1 a refusal or a finding (a refused call, a consent "
               "action refused, a person who said no, a failure of the store or the "
               "service); 2 usage or invalid input; 130 interrupted (Ctrl-C).")


def _common(p: argparse.ArgumentParser) -> None:
    from engine.app.common import add_db_option

    # Worked on directly; only the first verb on a new database, workspace add, makes it.
    add_db_option(p, creates=p.prog.endswith(" workspace add"))
    p.epilog = _EXIT_CODES
    p.add_argument("--service", metavar="ADDRESS", type=given,
                   help="go through a running `arrowgate serve`: its socket path or "
                        "http://127.0.0.1:PORT")
    p.add_argument("--token-file", metavar="PATH", type=given,
                   help="with --service: the bearer token (default: the database path "
                        "plus .operator-token)")
    p.add_argument("--json", action="store_true", help="answer in JSON (errors too, on stderr)")
    p.set_defaults(fn=_cmd)
    _text_only(p)  # every verb's arguments are added by now: `_common` comes last


#: The write verbs' arguments that name a file or an address: any bytes a name may hold.
_PATHS = frozenset({"db", "service", "token_file", "folder", "out", "help"})


def _text_only(parser: argparse.ArgumentParser) -> None:
    """Give every argument of ``parser`` that takes a value and names no file
    (`_PATHS`) the type `text_argument`: an id, name, permission, ``--set`` or hash
    that is not UTF-8 is a usage error naming it."""
    from engine.app.common import text_argument

    for action in parser._actions:
        if action.dest not in _PATHS and action.nargs != 0 and action.type is None \
                and not isinstance(action, argparse._SubParsersAction):
            action.type = text_argument


def register(sub: Any) -> None:
    """Add the write verbs (workspace, node, arrow, package, call, hold, token) to the
    command line."""
    writecanvas.register(sub, _common)
    writepackages.register(sub, _common)
    writecalls.register(sub, _common)
    writeholds.register(sub, _common)
    writetokens.register(sub, _common)  # token mint|revoke|list
