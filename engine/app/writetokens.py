"""The token verbs: ``token mint PRINCIPAL``, ``token revoke ID`` and ``token list``.

A card's or an agent's token (SPEC §10.1) is minted by the operator, from a
person's process (`engine.app.cli_write` makes the check first, as for every
consent verb: an agent must not mint itself a card's token), on the store
(``--db``, ``--store``) or through a running ``arrowgate serve`` (``--service``).
Its secret is shown once: printed alone on standard output, or written with
``--out FILE`` to a new file of mode 0600 (what ``arrowgate mcp --token-file``
takes) and not printed. A principal that names no card or agent on the canvas
(or none in ``--workspace``), a workspace that does not exist, or an ``--out``
file that is there, or inside a workspace's folder (where a card with ``fs.read``
could read it), is an error, exit 2, with nothing minted or written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.app.asking import Answer
from engine.app.common import given
from engine.app.tokenbackends import listing, open_tokens
from engine.app.tokenfile import check_out, inside, write_out
from engine.app.writefailure import OK, USAGE, Failure

__all__ = ["parse_principal", "register", "run"]

#: The kinds of node a token is minted for.
_KINDS = ("card", "agent")
#: The longest node id a principal names (as ``POST /v1/tokens`` takes it).
_LONGEST_ID = 256


def parse_principal(text: str) -> tuple[str, str]:
    """``card:ID`` or ``agent:ID`` as (kind, node id).

    Raises:
        Failure: anything else (exit 2), saying what a token is minted for.
    """
    kind, sep, node = text.partition(":")
    if text == "operator":
        why = "the operator's token is the one `arrowgate serve` writes to its --token-file"
    elif not sep:
        why = "give it as card:ID or agent:ID"
    elif kind not in _KINDS:
        why = f"a token is minted for a card or an agent (card:ID or agent:ID), not {kind!r}"
    elif not node:
        why = f"no node id after {kind}:"
    elif len(node) > _LONGEST_ID or any(c.isspace() or not c.isprintable() for c in node):
        why = f"a node id is at most {_LONGEST_ID} printable characters without spaces"
    else:
        return kind, node
    raise Failure.coded(USAGE, "INVALID_ARGUMENT", f"principal {text!r}: {why}",
                        reason="bad-principal")


async def run(verb: str, args: argparse.Namespace) -> Answer:
    """Carry out a token verb: (exit code, JSON answer, text answer)."""
    if verb == "token list":
        rows = listing(args, live_only=not args.all)
        return OK, [row._asdict() for row in rows], _table(rows)
    if verb == "token mint":
        return await _mint(args)
    tokens = open_tokens(args)
    try:
        await tokens.revoke_token(args.id)
    finally:
        await tokens.aclose()
    return OK, {"id": args.id, "revoked": True}, f"token {args.id} revoked"


async def _mint(args: argparse.Namespace) -> Answer:
    kind, node = parse_principal(args.principal)
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        _refuse_own_file(out, args)
        check_out(out, replace=args.force)  # before anything is minted
    elif args.force:
        raise Failure(USAGE, "--force replaces an --out file: give --out FILE")
    tokens = open_tokens(args)
    try:
        folders = await tokens.check_principal(kind, node, args.workspace)
        if out is not None:
            for folder in folders:
                if inside(out, folder):
                    raise Failure(USAGE, f"--out {out}: inside the workspace folder {folder}, "
                                         "where a card allowed fs.read could read the token")
        token_id, token = await tokens.mint_token(kind, node)
        principal = f"{kind}:{node}"
        if out is None:
            # The secret alone on standard output (`> FILE`, `$(…)`); what it is, beside.
            if not args.json:
                print(f"arrowgate: token {token_id} for {principal}, shown once (revoke it: "
                      f"arrowgate token revoke {token_id})", file=sys.stderr)
            return OK, {"id": token_id, "principal": principal, "token": token}, token
        try:
            write_out(out, token, replace=args.force)
        except OSError as exc:
            await tokens.revoke_token(token_id)  # never a token standing that nobody holds
            raise Failure(USAGE, f"--out {out}: cannot be written "
                                 f"({exc.strerror or exc}): token {token_id} is revoked") from exc
    finally:
        await tokens.aclose()
    return OK, {"id": token_id, "principal": principal, "file": str(out)}, \
        f"token {token_id} for {principal} written to {out} (mode 0600)"


def _refuse_own_file(out: Path, args: argparse.Namespace) -> None:
    """Refuse an ``--out`` that is the database (``--db``, else the default) or a file
    of its own — its log, its anchor, its operator's token — or the ``--token-file``
    given: ``--force`` would put a token where the canvas, or what vouches for it, was
    (as ``arrowgate serve --token-file`` refuses its own database).

    Raises:
        Failure: exit 2, naming the file and whose it is.
    """
    from engine.app.common import default_db_path, own_file_of, same_file

    what: str | None = None
    if not args.store:
        db = Path(args.db) if args.db else default_db_path()
        what = own_file_of(db, out)
        if what is not None:
            what = "the database" if what == "the database itself" else \
                f"a file of the database {db} ({what})"
    if what is None and args.token_file and same_file(out, Path(args.token_file)):
        what = "the operator's token file (--token-file)"
    if what is not None:
        raise Failure(USAGE, f"--out {out}: is {what}, not a file to write a token to "
                             "(give another path)")


def _table(rows: list[Any]) -> str:
    """``token list``'s lines: id, principal, when made (local time), when revoked."""
    from engine.app.times import format_local

    if not rows:
        return "no tokens"
    lines = [(r.id, r.principal, format_local(r.made),
              "" if r.revoked is None else f"revoked {format_local(r.revoked)}") for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(line[:3], widths)),
                                line[3]]).rstrip() for line in lines)


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``token mint|revoke|list`` to the command line; ``common`` adds each verb's shared
    options (``--db``, ``--service``, ``--token-file``, ``--json``) last."""
    token = sub.add_parser("token", help="mint, revoke or list card and agent tokens of the "
                                          "service")
    acts = token.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("mint", help="mint a card's or an agent's token (operator); its "
                                     "secret is shown once")
    p.add_argument("principal", metavar="PRINCIPAL", help="card:ID or agent:ID, a node on "
                                                          "the canvas")
    p.add_argument("--workspace", metavar="WS", help="the workspace the node must be in")
    p.add_argument("--out", metavar="FILE", type=given,
                   help="write the token to this new file (mode 0600; a missing folder is "
                        "made, mode 0700), for `arrowgate mcp --token-file`, instead of "
                        "printing it")
    p.add_argument("--force", action="store_true",
                   help="with --out: replace the file if it exists")
    _store(p)
    common(p)
    p = acts.add_parser("revoke", help="revoke a token by its id (every server on the store "
                                       "refuses it from its next request)")
    p.add_argument("id", metavar="ID", help="the token's id (tok_…), as mint or list says")
    _store(p)
    common(p)
    p = acts.add_parser("list", help="the tokens in the store: ids, principals, when made "
                                     "(never a secret); --db or --store only")
    p.add_argument("--all", action="store_true", help="revoked tokens too, with when")
    _store(p)
    common(p)


def _store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="URL", type=given,
                   help="a shared PostgreSQL store (postgresql://…) instead of --db")
