"""The operator check: a person at a terminal, no agent in sight (SPEC §4.5)."""

from __future__ import annotations

import os

from engine.operator import ancestors, operator_check

PERSON = {"isatty": lambda: True, "environ": {"TERM": "xterm"},
          "tree": lambda: [["bash"], ["sshd: alice"]]}


def test_a_person_at_a_terminal_passes() -> None:
    """A terminal, a clean environment and no agent among the parents."""
    assert operator_check(**PERSON).ok  # type: ignore[arg-type]


def test_no_terminal_refuses() -> None:
    """Piped or scripted standard input is not a person."""
    check = operator_check(**{**PERSON, "isatty": lambda: False})  # type: ignore[arg-type]
    assert not check.ok and "not a terminal" in check.reason


def test_agent_environment_markers_refuse() -> None:
    """CLAUDECODE and arrowgate's own driven-terminal marker both refuse."""
    for marker in ("CLAUDECODE", "CODEX_SANDBOX", "ARROWGATE_DRIVEN"):
        check = operator_check(**{**PERSON, "environ": {marker: "1"}})  # type: ignore[arg-type]
        assert not check.ok and marker in check.reason


def test_an_agent_among_the_ancestors_refuses() -> None:
    """A node-run agent two levels up is found by its script name."""
    tree = lambda: [["bash"], ["node", "/usr/local/bin/claude", "--resume"], ["tmux"]]  # noqa: E731
    check = operator_check(**{**PERSON, "tree": tree})  # type: ignore[arg-type]
    assert not check.ok and "claude" in check.reason


def test_an_unreadable_process_tree_refuses() -> None:
    """When in doubt, refuse."""
    check = operator_check(**{**PERSON, "tree": lambda: None})  # type: ignore[arg-type]
    assert not check.ok and "cannot read" in check.reason


def test_real_ancestors_include_this_test_runner() -> None:
    """The real process tree is readable here and names pytest's own parent."""
    found = ancestors(os.getpid())
    assert found is not None and any("pytest" in " ".join(argv) for argv in found)
