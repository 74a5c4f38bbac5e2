"""The README and the command line name the same verbs and options: every verb (and
subcommand) and every option the parser has is named in the README, and every option a
row of the README's command tables names is one its verb takes.

(Round 31: `package decline --pending-hash`, `log export --jsonl` and `serve --heartbeat`
were in `--help` alone.)
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from engine.app.cli import build_parser

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _verbs(parser: argparse.ArgumentParser,
           words: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every verb and subcommand with its parser (``log verify``, ``package grant``)."""
    for name, sub in _subcommands(parser).items():
        yield " ".join((*words, name)), sub
        yield from _verbs(sub, (*words, name))


def _options(parser: argparse.ArgumentParser) -> list[list[str]]:
    return [a.option_strings for a in parser._actions
            if a.option_strings and "--help" not in a.option_strings]


def test_every_verb_and_option_of_the_command_line_is_in_the_readme() -> None:
    """Each verb is named (``arrowgate VERB`` or, in a row's second command, ```VERB``),
    and each option by one of its spellings."""
    unnamed = []
    for verb, parser in _verbs(build_parser()):
        if f"arrowgate {verb}" not in README and f"`{verb}" not in README:
            unnamed.append(verb)
        for spellings in _options(parser):
            if not any(re.search(rf"{re.escape(s)}(?![\w-])", README) for s in spellings):
                unnamed.append(f"{verb} {'/'.join(spellings)}")
    assert unnamed == []


def test_every_option_a_readme_row_names_is_its_verbs() -> None:
    """A command table row's options (`arrowgate node add WS ID TYPE [--set K=V]…` and the
    commands after it, `node remove ID`) are options of the verb the row names."""
    parser = build_parser()
    wrong = []
    rows = [line for line in README.splitlines() if line.startswith("| `arrowgate ")]
    assert len(rows) > 20
    for row in rows:
        for command in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            words = command.replace("\\|", "|").split()
            words = words[1:] if words[0] == "arrowgate" else words
            verb, named = parser, []
            while words and words[0] in _subcommands(verb):
                verb = _subcommands(verb)[words[0]]
                named.append(words.pop(0))
            taken = {s for spellings in _options(verb) for s in spellings}
            if not named:
                taken |= {"--version"}  # `arrowgate --version`
            for option in re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*", " ".join(words)):
                if option not in taken:
                    wrong.append(f"{' '.join(named) or 'arrowgate'}: {option}")
    assert wrong == []
