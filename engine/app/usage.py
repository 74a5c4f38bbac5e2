"""Usage errors of the command line: raised by its parser, answered by `engine.app.cli.main`.

argparse prints its usage and exits on arguments it refuses; the command line's
`Parser` raises `UsageError` instead, so that ``main`` answers it as every other
error — one JSON object under ``--json`` (`asks_json` reads that from the arguments
the parser refused), and shown inert.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["Parser", "UsageError", "asks_json"]

#: Where `Parser.parse_known_args` notes the parser that left arguments unparsed.
_REFUSER = "_arrowgate_refused_by"


class UsageError(Exception):
    """Arguments the parser refused: what `ArgumentParser.error` would print and exit with."""

    def __init__(self, prog: str, usage: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog  #: the verb's program name (``arrowgate log show``)
        self.usage = usage  #: its usage line, as ``--help`` begins
        self.message = message  #: what was wrong with the arguments


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are raised (`UsageError`) for `main` to
    answer as every other error: in JSON under ``--json``, and shown inert (argparse
    prints an unknown argument as it was typed, escape sequences and all).
    Subcommands' parsers are made of the same class (``add_subparsers``)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, self.format_usage(), message)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        # The innermost parser left with arguments it does not take notes itself: a
        # subcommand's parser returns first, and its namespace is copied into its
        # parent's, so the verb's note stands.
        if extras and not hasattr(parsed, _REFUSER):
            setattr(parsed, _REFUSER, self)
        return parsed, extras

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but arguments no parser took are refused by the verb's parser
        (its usage and name: ``arrowgate log show``), not by the top level's, whose
        usage names no flag of the verb."""
        parsed, extras = self.parse_known_args(args, namespace)
        refuser = vars(parsed).pop(_REFUSER, self)
        if extras:
            refuser.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def asks_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for ``--json`` (or an abbreviation argparse takes for it),
    before any ``--``: read without the parser, which refused them."""
    words = list(argv)
    if "--" in words:
        words = words[:words.index("--")]
    return any(len(w) > 3 and "--json".startswith(w) for w in words)
