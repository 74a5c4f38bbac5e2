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


def asks_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for ``--json`` (or an abbreviation argparse takes for it),
    before any ``--``: read without the parser, which refused them."""
    words = list(argv)
    if "--" in words:
        words = words[:words.index("--")]
    return any(len(w) > 3 and "--json".startswith(w) for w in words)
